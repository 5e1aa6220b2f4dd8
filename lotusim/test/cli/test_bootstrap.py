"""The bootstrap stops with one clear line when a tool is missing (run with a PATH that lacks it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def _path_without(tmp_path: Path, missing: set[str]) -> str:
    """A bin directory with links to everything on PATH (first hit wins) except the `missing` names."""
    fake = tmp_path / "bin"
    fake.mkdir()
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        if not os.path.isdir(directory):
            continue
        for entry in os.listdir(directory):
            target = fake / entry
            if entry in missing or target.exists() or not os.access(os.path.join(directory, entry), os.X_OK):
                continue
            target.symlink_to(os.path.join(directory, entry))
    python311 = shutil.which("python3.11") or sys.executable
    if "python3.11" not in missing and not (fake / "python3.11").exists():
        (fake / "python3.11").symlink_to(python311)
    return str(fake)


@pytest.mark.parametrize(
    ("missing", "expected"),
    [
        ({"python3.11"}, "Python 3.11 not found"),
        ({"cmake"}, "cmake not found: install it (Debian 12: apt-get install cmake)"),
        ({"cc", "gcc"}, "no C compiler (cc/gcc) found"),
    ],
)
def test_bootstrap_names_the_missing_tool_and_how_to_install_it(tmp_path, missing, expected):
    venv = tmp_path / "venv"
    home = os.environ.get("HOME", str(tmp_path))
    env = {"HOME": home, "PATH": _path_without(tmp_path, missing), "LOTUSIM_VENV": str(venv)}
    proc = subprocess.run(
        ["bash", str(ROOT / "tools" / "bootstrap.sh")], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 1
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("bootstrap: error: ") and expected in lines[0], proc.stderr
    assert not venv.exists(), "nothing is installed when a tool is missing"


@pytest.mark.parametrize(("given", "expected"), [(None, "LOCALHOST"), ("SUBNET", "SUBNET")])
def test_env_sh_keeps_discovery_on_this_machine_unless_the_user_opted_in(given, expected):
    """env.sh (written by the bootstrap) limits DDS discovery to the local host by default; a range the user set
    before sourcing it wins (docs/simulation.md, several machines)."""
    env = {k: v for k, v in os.environ.items() if k != "ROS_AUTOMATIC_DISCOVERY_RANGE"}
    if given is not None:
        env["ROS_AUTOMATIC_DISCOVERY_RANGE"] = given
    proc = subprocess.run(
        ["bash", "-c", f'. "{ROOT / "env.sh"}" && printf %s "$ROS_AUTOMATIC_DISCOVERY_RANGE"'],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == expected
