#!/usr/bin/env bash
# lotusim bootstrap: everything the project needs, from a bare machine, idempotent, no standard input.
#
#   bash tools/bootstrap.sh          (what `make bootstrap`, `make test` and `make demo` run first)
#
# 1. checks the tools (Python 3.11 unless a ROS 2 distribution is sourced, cmake, make, a C and a C++ compiler);
# 2. creates .venv and installs the pinned ROS 2 Kilted wheels (requirements/ros-kilted.txt) and the Python
#    dependencies (requirements/python.txt, transitive pins in requirements/constraints.txt); when ROS_DISTRO is
#    set and rclpy imports, it uses that ROS 2 instead of the wheels (venv with --system-site-packages);
# 3. builds lotusim_interfaces (and a tf2_msgs stand-in when the wheels lack it) with CMake + rosidl and installs
#    them into the venv prefix;
# 4. installs the lotusim package (editable), registers it in the ament index of the venv prefix (symlinks, as
#    colcon lays a package out: `ros2 launch lotusim ...`, `ros2 run lotusim ...`) and writes env.sh.
# Each step is skipped when its inputs are unchanged (stamp files in .venv/), so a second run takes seconds.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV=${LOTUSIM_VENV:-$ROOT/.venv}
BUILD=$ROOT/build
ENV_FILE=$ROOT/env.sh

say() { printf 'bootstrap: %s\n' "$*"; }
die() { printf 'bootstrap: error: %s\n' "$*" >&2; exit 1; }
need() {  # need <command> <how to install>
  command -v "$1" >/dev/null 2>&1 || die "$1 not found: $2"
}
sha_of() { cat "$@" 2>/dev/null | sha256sum | cut -c1-16; }
tree_sha() { (cd "$ROOT" && find "$@" -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16); }

# --- 1. tools -------------------------------------------------------------------------------------------------
MODE=wheels
if [ -n "${ROS_DISTRO:-}" ] && python3 -c 'import rclpy' >/dev/null 2>&1; then
  MODE=system
  PY=$(command -v python3)
  say "using the sourced ROS 2 $ROS_DISTRO ($PY)"
else
  PY=${PYTHON:-$(command -v python3.11 || true)}
  [ -n "$PY" ] || die "Python 3.11 not found (the ROS 2 wheels are built for CPython 3.11 only): install it (Debian 12: apt-get install python3.11 python3.11-venv python3.11-dev) or set PYTHON=/path/to/python3.11"
  "$PY" -c 'import sys; assert sys.version_info[:2] == (3, 11)' 2>/dev/null \
    || die "$PY is not Python 3.11 (the ROS 2 wheels are built for CPython 3.11 only): set PYTHON=/path/to/python3.11"
  "$PY" -c 'import venv, ensurepip' 2>/dev/null \
    || die "$PY has no venv/ensurepip module: install it (Debian 12: apt-get install python3.11-venv)"
fi
need cmake "install it (Debian 12: apt-get install cmake)"
need make "install it (Debian 12: apt-get install make)"
command -v cc >/dev/null 2>&1 || command -v gcc >/dev/null 2>&1 \
  || die "no C compiler (cc/gcc) found: install one (Debian 12: apt-get install gcc)"
command -v c++ >/dev/null 2>&1 || command -v g++ >/dev/null 2>&1 \
  || die "no C++ compiler (c++/g++) found, rosidl generates C++ type support: install one (Debian 12: apt-get install g++)"

# --- 2. venv and dependencies ----------------------------------------------------------------------------------
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import sys' >/dev/null 2>&1; then
  say "creating $VENV ($MODE)"
  rm -rf "$VENV"
  if [ "$MODE" = system ]; then "$PY" -m venv --system-site-packages "$VENV"; else "$PY" -m venv "$VENV"; fi
fi
VPY=$VENV/bin/python
PIP=("$VPY" -m pip install --disable-pip-version-check --no-input -q)

deps_sha=$MODE-$(sha_of "$ROOT"/requirements/*.txt)
if [ "$(cat "$VENV/.stamp-deps" 2>/dev/null)" != "$deps_sha" ]; then
  if [ "$MODE" = wheels ]; then
    say "installing ROS 2 Kilted wheels and Python dependencies (about a minute on a fresh machine)"
    "${PIP[@]}" -r "$ROOT/requirements/ros-kilted.txt" -r "$ROOT/requirements/python.txt" \
      -c "$ROOT/requirements/constraints.txt"
  else
    # Keep the distribution's numpy/scipy (its message packages are compiled against them); add what is missing.
    say "installing the Python dependencies missing from the sourced ROS 2"
    missing=$("$VPY" "$ROOT/tools/missing_requirements.py" "$ROOT/requirements/python.txt")
    # shellcheck disable=SC2086
    [ -z "$missing" ] || "${PIP[@]}" $missing
  fi
  echo "$deps_sha" > "$VENV/.stamp-deps"
  rm -f "$VENV/.stamp-interfaces" "$VENV/.stamp-tf2-msgs"
fi

# The message wheels' exported CMake targets hard-code the wheel builder's include paths; point them at this
# interpreter's (idempotent; see docs/install.md).
if [ "$MODE" = wheels ] && [ ! -f "$VENV/.stamp-cmake-patch" ]; then
  py_inc=$("$VPY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
  np_inc=$("$VPY" -c 'import numpy; print(numpy.get_include())')
  grep -rl --include='*.cmake' '/opt/python/cp311-cp311' "$VENV/share" 2>/dev/null | while read -r f; do
    sed -i "s#/opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include#$np_inc#g; s#/opt/python/cp311-cp311/include/python3.11#$py_inc#g" "$f"
  done
  touch "$VENV/.stamp-cmake-patch"
fi

# --- 3. lotusim_interfaces ---------------------------------------------------------------------------------------
if [ "$MODE" = wheels ]; then
  PREFIX_PATH=$VENV
else
  PREFIX_PATH=${AMENT_PREFIX_PATH:-}
fi
build_interfaces() {  # build_interfaces <package dir relative to ROOT>: CMake + rosidl, installed into the venv
  local dir=$1 name log
  name=$(basename "$dir")
  say "building $name (CMake + rosidl, about a minute)"
  mkdir -p "$BUILD"
  log=$BUILD/$name.log
  if ! (
    export AMENT_PREFIX_PATH=$PREFIX_PATH CMAKE_PREFIX_PATH=${PREFIX_PATH//:/;}
    export PATH=$VENV/bin:$PATH LD_LIBRARY_PATH=$VENV/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    cmake -S "$ROOT/$dir" -B "$BUILD/$name" -DCMAKE_INSTALL_PREFIX="$VENV" \
      -DPython3_EXECUTABLE="$VPY" -DBUILD_TESTING=OFF -DCMAKE_BUILD_TYPE=Release
    cmake --build "$BUILD/$name" -j"$(nproc 2>/dev/null || echo 2)"
    cmake --install "$BUILD/$name"
  ) >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    die "building $name failed (full log: $log)"
  fi
}
# tf2_msgs (for /tf) is not among the ROS 2 wheels: a stand-in with its TFMessage (third_party/tf2_msgs) is built
# when none imports; a sourced ROS 2 distribution has the real one.
tf2_sha=$(tree_sha third_party/tf2_msgs)-$deps_sha
if [ "$(cat "$VENV/.stamp-tf2-msgs" 2>/dev/null)" != "$tf2_sha" ]; then
  if [ "$MODE" = wheels ] || ! "$VPY" -c 'import tf2_msgs.msg' >/dev/null 2>&1; then
    build_interfaces third_party/tf2_msgs
  fi
  echo "$tf2_sha" > "$VENV/.stamp-tf2-msgs"
fi
iface_sha=$(tree_sha lotusim_interfaces)-$deps_sha
if [ "$(cat "$VENV/.stamp-interfaces" 2>/dev/null)" != "$iface_sha" ]; then
  build_interfaces lotusim_interfaces
  echo "$iface_sha" > "$VENV/.stamp-interfaces"
fi

# --- 4. lotusim (editable) and env.sh -------------------------------------------------------------------------------
pkg_sha=$(sha_of "$ROOT/lotusim/setup.py" "$ROOT/lotusim/setup.cfg" "$ROOT/lotusim/package.xml")
if [ "$(cat "$VENV/.stamp-lotusim" 2>/dev/null)" != "$pkg_sha" ]; then
  say "installing lotusim (editable)"
  "${PIP[@]}" --no-deps --no-build-isolation -e "$ROOT/lotusim"
  echo "$pkg_sha" > "$VENV/.stamp-lotusim"
fi
# The ament index entry, share/lotusim (package.xml, launch/, config/) and lib/lotusim/<executables>, as colcon
# lays them out, all symlinks into the source tree: `ros2 launch lotusim ...` and `ros2 run lotusim ...` find
# the editable package (tools/ament_register.py).
index_sha=$pkg_sha-$(sha_of "$ROOT/tools/ament_register.py")-$(cd "$ROOT/lotusim/launch" && ls -- *.launch.py | sha256sum | cut -c1-16)
if [ "$(cat "$VENV/.stamp-ament-index" 2>/dev/null)" != "$index_sha" ]; then
  say "registering lotusim in the ament index of $VENV (symlinks to the sources)"
  "$VPY" "$ROOT/tools/ament_register.py" "$VENV" || die "registering lotusim in the ament index failed"
  echo "$index_sha" > "$VENV/.stamp-ament-index"
fi

ros_setup=""
[ "$MODE" = system ] && ros_setup="# uses the ROS 2 $ROS_DISTRO that was sourced when bootstrapping: source it first"
cat > "$ENV_FILE.tmp" <<EOF
# Generated by tools/bootstrap.sh ($MODE mode): source it to use lotusim from a shell (POSIX sh, bash, zsh).
$ros_setup
. "$VENV/bin/activate"
export AMENT_PREFIX_PATH="$VENV\${AMENT_PREFIX_PATH:+:\$AMENT_PREFIX_PATH}"
export LD_LIBRARY_PATH="$VENV/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
export RMW_IMPLEMENTATION="\${RMW_IMPLEMENTATION:-rmw_fastrtps_cpp}"
# DDS discovery stays on this machine unless you set it before sourcing (docs/simulation.md, several machines)
export ROS_AUTOMATIC_DISCOVERY_RANGE="\${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}"
export LOTUSIM_ROOT="$ROOT"
EOF
if ! cmp -s "$ENV_FILE.tmp" "$ENV_FILE"; then mv "$ENV_FILE.tmp" "$ENV_FILE"; else rm -f "$ENV_FILE.tmp"; fi

"$VPY" -c 'import rclpy, lotusim_interfaces.action, tf2_msgs.msg, lotusim_core' \
  || die "the environment does not import (rclpy, lotusim_interfaces, tf2_msgs, lotusim_core): see the messages above"
say "ready ($MODE): source env.sh to use it"
