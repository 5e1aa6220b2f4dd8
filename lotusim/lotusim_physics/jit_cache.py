"""Keeps numba's on-disk cache of the physics kernel consistent with the sources.

numba (cache=True) re-validates a cached function only against the file that defines it, not against the
modules whose functions it inlines: after an edit of e.g. fins.py, integrators.step_fleet would load stale
machine code. Before any jitted physics module defines its functions (they all import layout, which calls
this), the cache of this package is dropped if the combined hash of the jitted sources changed.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

JITTED_MODULES = (
    "layout.py",
    "rigid_body.py",
    "added_mass.py",
    "damping.py",
    "restoring.py",
    "kinematics.py",
    "thrusters.py",
    "fins.py",
    "wind_load.py",
    "rotors.py",
    "body_lift.py",
    "equations_of_motion.py",
    "integrators.py",
    "aerial_integrator.py",
)


def sources_digest(package_dir: Path) -> str:
    h = hashlib.sha256()
    for name in JITTED_MODULES:
        path = package_dir / name
        h.update(name.encode())
        h.update(path.read_bytes() if path.exists() else b"")
    return h.hexdigest()


def drop_stale_cache(package_dir: Path | None = None) -> bool:
    """Delete this package's numba cache files if the jitted sources changed; returns True if it did."""
    package_dir = package_dir or Path(__file__).resolve().parent
    cache_dir = package_dir / "__pycache__"
    stamp = cache_dir / "numba_sources.sha256"
    digest = sources_digest(package_dir)
    try:
        if stamp.read_text() == digest:
            return False
    except OSError:
        pass
    try:
        cache_dir.mkdir(exist_ok=True)
        for f in list(cache_dir.glob("*.nbi")) + list(cache_dir.glob("*.nbc")):
            f.unlink(missing_ok=True)
        tmp = cache_dir / f"numba_sources.sha256.{os.getpid()}"
        tmp.write_text(digest)
        os.replace(tmp, stamp)
    except OSError:  # read-only installation: numba then falls back to its own cache location rules
        return False
    return True
