#!/usr/bin/env bash
# Build both packages with colcon, as on a machine with ROS 2 (here: the bootstrapped pip ROS 2 Kilted and
# colcon-common-extensions from PyPI in a scratch directory). Checks that lotusim_interfaces (ament_cmake) and
# lotusim (ament_python) build and install as ordinary ROS packages: executables in lib/lotusim, launch/config
# in share/lotusim. Usage: bash tools/colcon_check.sh [WORKDIR]  (about two minutes; not part of `make test`)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=${1:-$(mktemp -d)}
bash "$ROOT/tools/bootstrap.sh" >/dev/null
# shellcheck disable=SC1091
. "$ROOT/env.sh"
pip install -q --target "$WORK/colcon" colcon-common-extensions==0.3.0
export PYTHONPATH="$WORK/colcon" CMAKE_PREFIX_PATH="$ROOT/.venv"
cd "$WORK"
python -m colcon build --base-paths "$ROOT" --build-base "$WORK/build" --install-base "$WORK/install" \
  --cmake-args -DPython3_EXECUTABLE="$ROOT/.venv/bin/python" -DBUILD_TESTING=OFF
for f in lotusim/lib/lotusim/dynamics lotusim/lib/lotusim/mas_server lotusim/lib/lotusim/lotusim \
         lotusim/share/lotusim/launch/sim.launch.py lotusim/share/lotusim/config/vehicles/lrauv.yaml \
         lotusim_interfaces/share/lotusim_interfaces/msg/FleetState.msg; do
  test -e "$WORK/install/$f" || { echo "colcon_check: missing install/$f"; exit 1; }
done
echo "colcon_check: both packages built and installed in $WORK/install"
