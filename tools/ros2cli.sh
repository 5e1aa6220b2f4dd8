#!/usr/bin/env bash
# Installs the ROS 2 launch system and `ros2` command line into the bootstrapped venv, for wheel environments:
# they are not on the package index; ../shared/ros2cli/install.sh (beside the clone) installs upstream's, pinned.
#
#   bash tools/ros2cli.sh [INSTALLER]    (`make ros2cli`; .ci/run when the installer exists)
#
# INSTALLER defaults to $LOTUSIM_ROS2CLI or ../shared/ros2cli/install.sh. Skipped when a sourced ROS 2 distribution
# already has them, and when the same installer was run into this venv before (stamp .venv/.stamp-ros2cli).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV=${LOTUSIM_VENV:-$ROOT/.venv}
INSTALLER=${1:-${LOTUSIM_ROS2CLI:-$ROOT/../shared/ros2cli/install.sh}}
say() { printf 'ros2cli: %s\n' "$*"; }
die() { printf 'ros2cli: error: %s\n' "$*" >&2; exit 1; }

[ -f "$ROOT/env.sh" ] || die "no env.sh: run \`make bootstrap\` first"
# shellcheck disable=SC1091
. "$ROOT/env.sh"
if [ -n "${ROS_DISTRO:-}" ] && command -v ros2 >/dev/null 2>&1 && python -c 'import launch_ros' 2>/dev/null; then
  say "using the ros2 and launch of the sourced ROS 2 $ROS_DISTRO"
  exit 0
fi
[ -f "$INSTALLER" ] || die "$INSTALLER not found (the launch system and ros2 CLI installer, see docs/install.md)"
dir=$(cd "$(dirname "$INSTALLER")" && pwd)
sha=$( (cd "$dir" && find . -type f -print0 | sort -z | xargs -0 sha256sum) | sha256sum | cut -c1-16)
if [ "$(cat "$VENV/.stamp-ros2cli" 2>/dev/null)" = "$sha" ] && command -v ros2 >/dev/null 2>&1; then
  say "up to date ($(command -v ros2))"
  exit 0
fi
say "installing launch, launch_ros and the ros2 CLI into $VENV with $INSTALLER (a minute or more)"
bash "$INSTALLER" "$VENV"
echo "$sha" > "$VENV/.stamp-ros2cli"
