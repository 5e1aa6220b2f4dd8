"""Remove Fast DDS shared-memory files that no running process uses (what `fastdds shm clean` does, for the PyPI
wheels, which do not ship that tool).

Fast DDS keeps one file per shared-memory port and participant in /dev/shm (fastdds_*, sem.fastdds_*). A process
killed while it was creating one leaves a segment that is never marked initialised, and every later participant
that needs the same port waits for it forever, inside rclpy's Node() (seen: a SIGKILL at the wrong moment, then
no node of any ROS domain could start). .ci/run and `make test` run this first; it only removes files that no
process has open or mapped.
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


def main() -> int:
    if not SHM.is_dir():
        return 0
    used = in_use()
    stale = [p for p in SHM.iterdir() if p.name.startswith(("fastdds_", "sem.fastdds_")) and str(p) not in used]
    for path in stale:
        try:
            path.unlink()
        except OSError as exc:
            print(f"clean_shm: {path}: {exc}", file=sys.stderr)
    if stale:
        print(f"clean_shm: removed {len(stale)} unused Fast DDS shared-memory files from {SHM}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
