"""Start the nodes of a plan as processes, the way `ros2 launch` does, for machines without `launch`.

Each lotusim_core.launch_plan.NodeSpec (the same list sim.launch.py turns into launch_ros Nodes) becomes one
process of its console script with `--ros-args -r __node:=<name> --params-file <file> -r from:=to ...`; the
parameters go through a YAML parameters file, as `ros2 launch` does, so YAML-valued strings survive intact.
Stopping sends SIGINT to every process group and waits (SIGKILL after a timeout).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from lotusim_core.launch_plan import NodeSpec


def ros_arguments(spec: NodeSpec, params_file: Path) -> list[str]:
    args = ["--ros-args", "-r", f"__node:={spec.name}", "--params-file", str(params_file)]
    for source, target in spec.remappings:
        args += ["-r", f"{source}:={target}"]
    return [*spec.arguments, *args]


def write_params_file(spec: NodeSpec, directory: Path) -> Path:
    path = directory / f"{spec.name}.params.yaml"
    path.write_text(yaml.safe_dump({spec.name: {"ros__parameters": dict(spec.parameters)}}, sort_keys=True))
    return path


class ProcessLauncher:
    """The processes of one simulation; use as a context manager so that they are always stopped."""

    def __init__(self, specs: list[NodeSpec], log_dir: str | Path | None = None) -> None:
        self.specs = specs
        self._tmp = tempfile.TemporaryDirectory(prefix="lotusim-run-")
        self.log_dir = Path(log_dir) if log_dir else Path(self._tmp.name)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.processes: dict[str, subprocess.Popen] = {}

    def __enter__(self) -> ProcessLauncher:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        for spec in self.specs:
            executable = shutil.which(spec.executable) or str(Path(sys.executable).parent / spec.executable)
            if not Path(executable).exists():
                raise FileNotFoundError(
                    f"node executable {spec.executable!r} not found (is lotusim installed? "
                    "run `make bootstrap` and source env.sh)"
                )
            params = write_params_file(spec, Path(self._tmp.name))
            log = open(self.log_dir / f"{spec.name}.log", "w")  # noqa: SIM115 - closed in stop()
            self.processes[spec.name] = subprocess.Popen(
                [executable, *ros_arguments(spec, params)],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                env=os.environ.copy(),
            )
            self.processes[spec.name].log = log

    def dead(self) -> list[str]:
        """Names of the processes that have exited."""
        return [name for name, p in self.processes.items() if p.poll() is not None]

    def log_tail(self, name: str, lines: int = 15) -> str:
        path = self.log_dir / f"{name}.log"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""

    def stop(self, timeout_s: float = 10.0) -> None:
        for proc in self.processes.values():
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGINT)
        deadline = time.monotonic() + timeout_s
        for proc in self.processes.values():
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            proc.log.close()
        self.processes.clear()
        self._tmp.cleanup()
