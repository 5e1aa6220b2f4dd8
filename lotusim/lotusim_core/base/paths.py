"""Where lotusim's data files live: the package share directory of an installed package (colcon / ament
index), or the source tree of an editable install."""

from __future__ import annotations

import os
from pathlib import Path

_SOURCE_ROOT = Path(__file__).resolve().parent.parent  # lotusim/ in the source tree


def package_share() -> Path:
    """Return the directory holding `config/` and `launch/` (share/lotusim or the source package dir)."""
    if (_SOURCE_ROOT / "config").is_dir():
        return _SOURCE_ROOT
    for prefix in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep):
        share = Path(prefix) / "share" / "lotusim"
        if (share / "config").is_dir():
            return share
    raise FileNotFoundError(
        "lotusim data files not found: neither the source tree nor share/lotusim on AMENT_PREFIX_PATH "
        "has config/ (source env.sh or the colcon install's setup.bash)"
    )


def config_dir() -> Path:
    """Return the `config/` directory (vehicles/, scenarios/)."""
    return package_share() / "config"
