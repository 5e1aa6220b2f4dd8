"""Start the nodes of a plan as processes, the way `ros2 launch` does, for machines without `launch`.

Each lotusim_core.sim.launch_plan.NodeSpec (the same list sim.launch.py turns into launch_ros Nodes) becomes one
process of its console script with `--ros-args -r __node:=<name> --params-file <file> -r from:=to ...`; the
parameters go through a YAML parameters file, as `ros2 launch` does, so YAML-valued strings survive intact.
Stopping sends SIGINT to every process group and waits (SIGKILL after a timeout); a node whose launcher dies
(even by kill -9) gets SIGTERM from the kernel (`die_with_parent`), so nothing is left running.

Supervision (as launch's `respawn=True` with `respawn_delay`): `supervise()`, called in the caller's loop,
starts again a node that died, `RESPAWN_DELAY_S` after its death, appending to its log; a node that died
`MAX_RESTARTS` times within `RESTART_WINDOW_S` is given up (`supervise()` raises NodeGaveUp).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from lotusim_core.sim.launch_plan import NodeSpec, dds_environment

RESPAWN_DELAY_S = 1.0  # wall time between a node's death and its restart (launch's respawn_delay)
MAX_RESTARTS = 5  # restarts of one node within RESTART_WINDOW_S before the run is given up
RESTART_WINDOW_S = 60.0


PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when the thread that started it ends (Linux)


def _libc_prctl():
    """libc's prctl, looked up now: the forked child must not load or look up anything (the parent's other
    threads may have held the dynamic loader's lock at the fork)."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _libc_prctl() if sys.platform.startswith("linux") else None


def die_with_parent():
    """A `preexec_fn` for Popen: the child gets SIGTERM when its parent dies, however it dies (kill -9
    included; Linux only, None elsewhere). Nodes run in sessions of their own (a terminal's Ctrl-C goes through
    us), so without it a killed `lotusim run` left its nodes running, a fast-mode worker on a full core, until
    someone found them. The signal follows the death of the thread that calls Popen: call Popen from the main
    thread (lotusim run and the fleet bench do)."""
    if _PRCTL is None:
        return None
    parent, prctl, sigterm = os.getpid(), _PRCTL, int(signal.SIGTERM)

    def preexec() -> None:
        prctl(PR_SET_PDEATHSIG, sigterm)
        if os.getppid() != parent:  # the parent died before prctl took effect
            os.kill(os.getpid(), sigterm)

    return preexec


class NodeGaveUp(RuntimeError):
    """A node died more than MAX_RESTARTS times within RESTART_WINDOW_S."""


@dataclass
class Restart:
    """One restart of a node: its name, the exit code it died with, the wall time (s) it was down."""

    name: str
    returncode: int
    down_s: float


@dataclass
class _Supervised:
    died_at: float | None = None  # monotonic s, while waiting for the respawn delay
    restarts: list[float] = field(default_factory=list)  # monotonic s of the restarts in the window


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
        self.restarts: list[Restart] = []  # every restart so far, in order
        self._supervised: dict[str, _Supervised] = {}
        self._params: dict[str, Path] = {}

    def __enter__(self) -> ProcessLauncher:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        for spec in self.specs:
            self._params[spec.name] = write_params_file(spec, Path(self._tmp.name))
            self._start_one(spec, "w")
            self._supervised[spec.name] = _Supervised()

    def _start_one(self, spec: NodeSpec, log_mode: str) -> None:
        executable = shutil.which(spec.executable) or str(Path(sys.executable).parent / spec.executable)
        if not Path(executable).exists():
            raise FileNotFoundError(
                f"node executable {spec.executable!r} not found (is lotusim installed? "
                "run `make bootstrap` and source env.sh)"
            )
        path = self.log_dir / f"{spec.name}.log"
        if log_mode == "w":
            path.write_text("")
        # append mode (O_APPEND, inherited by the node): our notes and the node's output never overwrite each other
        log = open(path, "a")  # noqa: SIM115 - closed in stop()
        self.processes[spec.name] = subprocess.Popen(
            [executable, *ros_arguments(spec, self._params[spec.name])],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env={**os.environ, **dds_environment(os.environ)},
            preexec_fn=die_with_parent(),
        )
        self.processes[spec.name].log = log

    def dead(self) -> list[str]:
        """Names of the processes that have exited."""
        return [name for name, p in self.processes.items() if p.poll() is not None]

    def supervise(self, now: float | None = None) -> list[Restart]:
        """Restart the nodes that died (each RESPAWN_DELAY_S after its death); returns the restarts done now.
        Raises NodeGaveUp for a node that died more than MAX_RESTARTS times within RESTART_WINDOW_S."""
        now = time.monotonic() if now is None else now
        done = []
        for spec in self.specs:
            proc, state = self.processes[spec.name], self._supervised[spec.name]
            if proc.poll() is None:
                continue
            if state.died_at is None:
                state.died_at = now
                state.restarts = [t for t in state.restarts if now - t < RESTART_WINDOW_S]
                if len(state.restarts) >= MAX_RESTARTS:
                    raise NodeGaveUp(
                        f"node {spec.name} died {len(state.restarts) + 1} times within {RESTART_WINDOW_S:.0f} s "
                        f"(exit code {proc.returncode}); not restarted:\n{self.log_tail(spec.name)}"
                    )
            if now - state.died_at < RESPAWN_DELAY_S:
                continue
            proc.log.write(f"\n[lotusim run] {spec.name} exited with code {proc.returncode}; restarted\n")
            proc.log.close()
            self._start_one(spec, "a")
            done.append(Restart(spec.name, proc.returncode, now - state.died_at))
            state.restarts.append(now)
            state.died_at = None
        self.restarts += done
        return done

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
