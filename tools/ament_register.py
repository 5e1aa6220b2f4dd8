"""Register the editable lotusim package in the ament index of a prefix, as `colcon build --symlink-install` lays
it out, so that `ros2 launch lotusim ...`, `ros2 run lotusim ...` and ament_index_python find it.

    python tools/ament_register.py PREFIX     (tools/bootstrap.sh runs it with the venv prefix)

Everything is a symlink into the source tree (or the console scripts of the editable install), so the source
stays the truth:

    PREFIX/share/ament_index/resource_index/packages/lotusim -> lotusim/resource/lotusim
    PREFIX/share/lotusim/package.xml                          -> lotusim/package.xml
    PREFIX/share/lotusim/launch/<file>.launch.py              -> lotusim/launch/<file>.launch.py (one per file:
                                                                 ros2 launch walks share/ without following
                                                                 directory symlinks)
    PREFIX/share/lotusim/config, PREFIX/share/lotusim/data    -> lotusim/config, lotusim/data
    PREFIX/lib/lotusim/<executable>                           -> PREFIX/bin/<executable> (every console script)

Idempotent: links that are already right are kept, stale ones (a removed launch file or console script) are
removed. Exit status 1 with one line on stderr when the package is not installed in this interpreter.
"""

from __future__ import annotations

import os
import sys
from importlib import metadata
from pathlib import Path

PACKAGE = "lotusim"
SOURCE = Path(__file__).resolve().parent.parent / PACKAGE  # the ament_python package folder (setup.py)


def console_scripts(distribution: str = PACKAGE) -> list[str]:
    """Names of the console scripts of the installed distribution (its entry points)."""
    return sorted(e.name for e in metadata.distribution(distribution).entry_points if e.group == "console_scripts")


def link(path: Path, target: Path) -> None:
    """Make `path` a symlink to `target` (absolute), replacing whatever is there unless it is already right."""
    if path.is_symlink() and os.readlink(path) == str(target):
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        raise FileExistsError(f"{path}: a directory is in the way of the symlink to {target}")
    path.symlink_to(target)


def sync_dir(directory: Path, targets: dict[str, Path]) -> None:
    """`directory` holds exactly one symlink per entry of `targets` (name -> target); other symlinks go."""
    directory.mkdir(parents=True, exist_ok=True)
    for entry in directory.iterdir():
        if entry.is_symlink() and entry.name not in targets:
            entry.unlink()
    for name, target in targets.items():
        link(directory / name, target)


def register(prefix: Path, source: Path = SOURCE, scripts: list[str] | None = None) -> None:
    """Lay out the ament index entry, share/lotusim and lib/lotusim of `prefix` (see the module docstring)."""
    scripts = console_scripts() if scripts is None else scripts
    bin_dir = prefix / "bin"
    missing = [s for s in scripts if not (bin_dir / s).exists()]
    if missing:
        raise FileNotFoundError(f"{bin_dir}: console scripts {', '.join(missing)} missing (is lotusim installed?)")
    link(prefix / "share" / "ament_index" / "resource_index" / "packages" / PACKAGE, source / "resource" / PACKAGE)
    share = prefix / "share" / PACKAGE
    link(share / "package.xml", source / "package.xml")
    sync_dir(share / "launch", {p.name: p for p in sorted((source / "launch").glob("*.launch.py"))})
    for folder in ("config", "data"):
        link(share / folder, source / folder)
    sync_dir(prefix / "lib" / PACKAGE, {s: bin_dir / s for s in scripts})


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: ament_register.py PREFIX", file=sys.stderr)
        return 2
    try:
        register(Path(argv[0]).absolute())
    except (OSError, metadata.PackageNotFoundError) as exc:
        print(f"ament_register: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
