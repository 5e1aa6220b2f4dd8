"""lotusim_core.ros.shared_memory removes the Fast DDS shared-memory files that no process uses, and only those."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

import pytest

from lotusim_core.ros import shared_memory

SHM = Path("/dev/shm")
pytestmark = pytest.mark.skipif(not SHM.is_dir(), reason="no /dev/shm")


def test_old_unused_files_go_and_files_in_use_or_new_stay():
    tag = uuid.uuid4().hex[:12]
    unused, held, other = SHM / f"fastdds_port9{tag}", SHM / f"sem.fastdds_{tag}_mutex", SHM / f"other_{tag}"
    new = SHM / f"fastdds_{tag}_new"
    for path in (unused, held, other):
        path.write_bytes(b"x")
    fd = os.open(held, os.O_RDONLY)  # in use by this process
    try:
        time.sleep(1.0)
        new.write_bytes(b"x")  # what a participant starting now creates before it maps it
        assert shared_memory.remove_unused(min_age_s=0.5) >= 1  # and any other old unused file
        assert not unused.exists() and held.exists() and other.exists() and new.exists()
    finally:
        os.close(fd)
        for path in (held, other, new):
            path.unlink(missing_ok=True)


def test_the_command_line_removes_nothing_new(capsys):
    """`python -m lotusim_core.ros.shared_memory` (make test, lotusim run) keeps files younger than MIN_AGE_S."""
    new = SHM / f"fastdds_port9{uuid.uuid4().hex[:12]}"
    new.write_bytes(b"x")
    try:
        assert shared_memory.main() == 0
        assert new.exists()
    finally:
        new.unlink(missing_ok=True)
