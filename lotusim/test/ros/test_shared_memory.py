"""lotusim_core.ros.shared_memory removes the Fast DDS shared-memory files that no process uses, and only those."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from lotusim_core.ros import shared_memory

SHM = Path("/dev/shm")
pytestmark = pytest.mark.skipif(not SHM.is_dir(), reason="no /dev/shm")


def test_unused_files_go_and_files_in_use_stay(capsys):
    tag = uuid.uuid4().hex[:12]
    unused, held, other = SHM / f"fastdds_port9{tag}", SHM / f"sem.fastdds_{tag}_mutex", SHM / f"other_{tag}"
    for path in (unused, held, other):
        path.write_bytes(b"x")
    fd = os.open(held, os.O_RDONLY)  # in use by this process
    try:
        shared_memory.main()
        assert not unused.exists() and held.exists() and other.exists()
        assert "removed" in capsys.readouterr().out
    finally:
        os.close(fd)
        for path in (held, other):
            path.unlink(missing_ok=True)
