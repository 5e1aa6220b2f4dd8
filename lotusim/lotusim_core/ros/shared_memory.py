"""Fast DDS shared-memory files that no running process uses, removed (what `fastdds shm clean` does; the PyPI
wheels do not ship that tool). `python -m lotusim_core.ros.shared_memory` from a shell.

Fast DDS keeps one file per shared-memory port and participant in /dev/shm (fastdds_*, sem.fastdds_*). A process
killed while it was creating one leaves a segment that is never marked initialised, and every later participant
that needs the same port waits for it forever, inside rclpy's Node() (seen: a SIGKILL at the wrong moment, then
no node of any ROS domain could start). `lotusim run` and `make test` remove them first, and the tests after killing
a test's leftover processes; only files that no process has open or mapped, and that are not new (`MIN_AGE_S`),
are removed.
"""

from __future__ import annotations

import os
import sys
import time
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


MIN_AGE_S = 10.0
"""A file younger than this is never removed: a participant starting at the same moment creates its files before it
maps them, and removing one then cuts that participant off from its peers (seen: `lotusim run` starting beside a
test's listener, which then never heard one of the workers)."""


def remove_unused(min_age_s: float = MIN_AGE_S) -> int:
    """Remove the Fast DDS files of /dev/shm that no process uses and that are at least `min_age_s` old (s, by
    their last change); the number removed. The candidates are listed before the processes' files are read, so a
    file created meanwhile is never a candidate."""
    if not SHM.is_dir():
        return 0
    candidates = _old_fast_dds_files(time.time() - min_age_s)
    used = in_use()
    removed = 0
    for path in candidates:
        if str(path) in used:
            continue
        try:
            path.unlink()
            removed += 1
        except FileNotFoundError:  # removed meanwhile (by its owner, or another clean-up)
            continue
        except OSError as exc:  # another user's
            print(f"shared_memory: {path}: {exc}", file=sys.stderr)
    return removed


def _old_fast_dds_files(changed_before: float) -> list[Path]:
    """Fast DDS files of /dev/shm whose last change (content or metadata, epoch s) is before `changed_before`."""
    old = []
    for path in SHM.iterdir():
        if not path.name.startswith(("fastdds_", "sem.fastdds_")):
            continue
        try:
            info = path.stat()
        except OSError:
            continue
        if max(info.st_mtime, info.st_ctime) < changed_before:
            old.append(path)
    return old


def main() -> int:
    removed = remove_unused()
    if removed:
        print(f"lotusim: removed {removed} unused Fast DDS shared-memory files from {SHM}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
