"""Fast DDS shared-memory files that no running process uses, removed (what `fastdds shm clean` does; the PyPI
wheels do not ship that tool). `python -m lotusim_core.ros.shared_memory` from a shell.

Fast DDS keeps one file per shared-memory port and participant in /dev/shm (fastdds_*, sem.fastdds_*). A process
killed while it was creating one leaves a segment that is never marked initialised, and every later participant
that needs the same port waits for it forever, inside rclpy's Node() (seen: a SIGKILL at the wrong moment, then
no node of any ROS domain could start). `lotusim run` and `make test` remove them first, and the tests after killing
a test's leftover processes; only files that no process has open or mapped are removed.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

SHM = Path("/dev/shm")


def in_use() -> set[str]:
    """The /dev/shm paths that some process has open or mapped."""
    used: set[str] = set()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            for fd in (proc / "fd").iterdir():
                target = os.readlink(fd)
                if target.startswith("/dev/shm/"):
                    used.add(target)
            for line in (proc / "maps").read_text().splitlines():
                if "/dev/shm/" in line:
                    used.add(line[line.index("/dev/shm/") :].split(" (deleted)")[0])
        except OSError:  # the process ended meanwhile, or is not ours to read
            continue
    return used


def remove_unused() -> int:
    """Remove the Fast DDS files of /dev/shm that no process uses; the number removed."""
    if not SHM.is_dir():
        return 0
    used = in_use()
    removed = 0
    for path in SHM.iterdir():
        if path.name.startswith(("fastdds_", "sem.fastdds_")) and str(path) not in used:
            try:
                path.unlink()
                removed += 1
            except OSError as exc:  # another user's, or gone meanwhile
                print(f"shared_memory: {path}: {exc}", file=sys.stderr)
    return removed


def main() -> int:
    removed = remove_unused()
    if removed:
        print(f"lotusim: removed {removed} unused Fast DDS shared-memory files from {SHM}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
