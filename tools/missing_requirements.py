"""Print the requirement lines whose distribution is not installed (used by the bootstrap on a sourced ROS 2).

Usage: python tools/missing_requirements.py requirements/python.txt
A requirement whose distribution is already importable keeps the installed version (a ROS distribution's
message packages are compiled against its own numpy); the others are printed, pinned, for pip.
"""

import sys
from importlib import metadata


def missing(lines: list[str]) -> list[str]:
    out = []
    for line in lines:
        spec = line.split("#", 1)[0].strip()
        if not spec:
            continue
        name = spec.split("==", 1)[0].split("[", 1)[0].strip()
        try:
            metadata.version(name)
        except metadata.PackageNotFoundError:
            out.append(spec)
    return out


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as f:
        print(" ".join(missing(f.read().splitlines())))
