"""The bootstrap registers the editable lotusim in the ament index as colcon lays a package out
(tools/ament_register.py): ament_index_python (what `ros2 launch` and `ros2 run` use) finds its share directory,
launch files and executables, all symlinks into the source tree."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest
from ament_index_python.packages import get_package_prefix, get_package_share_directory

pytestmark = pytest.mark.ros  # starts DDS participants (nodes, node processes or the ros2 CLI)
ROOT = Path(__file__).resolve().parents[3]
SOURCE = ROOT / "lotusim"
SCRIPTS = ["current_server", "dynamics", "lotusim", "mas_server", "sensor_publisher"]


def _register_module():
    spec = importlib.util.spec_from_file_location("ament_register", ROOT / "tools" / "ament_register.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_bootstrapped_environment_finds_lotusim_in_the_ament_index():
    if "AMENT_PREFIX_PATH" not in os.environ:
        pytest.skip("AMENT_PREFIX_PATH is not set: source env.sh (or a colcon install's setup.bash)")
    share = Path(get_package_share_directory("lotusim"))
    assert (share / "package.xml").resolve().read_text() == (SOURCE / "package.xml").read_text()
    for launch_file in ("sim.launch.py", "hil.launch.py"):
        assert (share / "launch" / launch_file).is_file()
    assert (share / "config" / "scenarios" / "single_auv.yaml").is_file()
    lib = Path(get_package_prefix("lotusim")) / "lib" / "lotusim"
    for script in SCRIPTS:
        assert os.access(lib / script, os.X_OK), f"{lib / script} is not an executable"


def test_registration_links_into_the_sources_and_is_idempotent(tmp_path):
    register = _register_module()
    prefix = tmp_path / "prefix"
    (prefix / "bin").mkdir(parents=True)
    for script in ("dynamics", "old_node"):
        (prefix / "bin" / script).write_text("#!/bin/sh\n")
        (prefix / "bin" / script).chmod(0o755)
    register.register(prefix, SOURCE, ["dynamics", "old_node"])
    share = prefix / "share" / "lotusim"
    assert (prefix / "share/ament_index/resource_index/packages/lotusim").resolve() == SOURCE / "resource/lotusim"
    assert (share / "launch" / "sim.launch.py").resolve() == SOURCE / "launch" / "sim.launch.py"
    assert not (share / "launch").is_symlink(), "ros2 launch does not walk into a symlinked directory"
    assert (share / "config").resolve() == SOURCE / "config"
    assert sorted(p.name for p in (prefix / "lib" / "lotusim").iterdir()) == ["dynamics", "old_node"]
    # a second run with a script gone: the same layout, without the stale link
    register.register(prefix, SOURCE, ["dynamics"])
    assert sorted(p.name for p in (prefix / "lib" / "lotusim").iterdir()) == ["dynamics"]
    assert (prefix / "lib" / "lotusim" / "dynamics").resolve() == prefix / "bin" / "dynamics"


def test_registration_refuses_a_prefix_without_the_console_scripts(tmp_path):
    register = _register_module()
    (tmp_path / "bin").mkdir()
    with pytest.raises(FileNotFoundError, match="console scripts dynamics missing"):
        register.register(tmp_path, SOURCE, ["dynamics"])
