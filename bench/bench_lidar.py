"""Benchmark of the LiDAR models (ROS-free): cost per scan by the real Brest coastline, through the sensor node's
own sampler (lotusim_sensors.samplers: sensor poses, the other vessels' hull boxes, the ray caster of
lotusim_env.raycast, noise), without DDS.

Scene: the shipped OpenStreetMap coast (lotusim/config/world/brest_coast.geojson, 670 edges), a flat 30 m seabed,
20 buoys, V vessels at sea within 150 m of the shore (seeded places and headings), each a 5 m × 2.4 m × 1.6 m hull
box, each carrying the LiDAR (mounted 1.5 m up). One call scans every vessel at once, as the node does when they
are all due. For each size we time `--repeat` calls and keep the fastest (the machine is shared).

- 2-D: 360 beams over 360°, 80 m (the issue's goal: 100 vessels at 10 Hz in real time = 100 scans in < 100 ms).
- 3-D: the VLP-16 defaults (16 channels × 1800 azimuths = 28,800 beams, 100 m) at 10 Hz.

Then the whole sensor node (sensor_publisher in process, publishing over Fast DDS, no subscriber) with
`--node-vessels` vessels each carrying the 2-D LiDAR at 10 Hz, fed fleet states at 100 Hz through its callback:
the wall time of one second of sim time (best of 3).

Usage: python bench/bench_lidar.py [--vessels 1 10 100] [--vessels-3d 1 10] [--repeat 5] [--node-vessels 100]
Prints a table. Numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import shapely

from lotusim_core.base.paths import config_dir
from lotusim_env.environment import build_environment
from lotusim_env.world import land_contains
from lotusim_sensors.banks import SensorBanks
from lotusim_sensors.roster import Roster
from lotusim_sensors.samplers import SAMPLERS, Site
from lotusim_sensors.suite import KINDS, parse_suite

HULL = (np.array([2.5, 1.2, 0.8]), np.array([0.0, 0.0, 0.3]))  # half extents, centre (m, base_link FLU)
SUITES = {
    "lidar_2d": {"beams": 360, "fov_deg": 360.0, "rate_hz": 10.0, "position_frd_m": [0.0, 0.0, -1.5]},
    "lidar_3d": {"position_frd_m": [0.0, 0.0, -1.5]},
}


def scene(seed: int = 1):
    """The environment: Brest coast, 20 buoys near the shore, flat 30 m seabed."""
    coast = str(config_dir() / "world" / "brest_coast.geojson")
    base = {"origin": {"latitude_deg": 48.3, "longitude_deg": -4.6}, "bathymetry": {"model": "flat", "depth_m": 30.0},
            "world": {"coast": {"file": coast}}}  # fmt: skip
    env = build_environment(base)
    places = near_shore(env.world, 20, seed + 100)
    base["world"]["objects"] = [{"name": f"b{i}", "kind": "buoy", "position": [float(x), float(y), 0.0]}
                                for i, (x, y) in enumerate(places)]  # fmt: skip
    return build_environment(base)


def near_shore(world, n: int, seed: int) -> np.ndarray:
    """n seeded points at sea within 150 m of land, within 8 km of the origin (ENU m)."""
    rng, out = np.random.default_rng(seed), []
    while len(out) < n:
        p = rng.uniform(-8000.0, 8000.0, (4000, 2))
        ok = ~land_contains(world, p) & (shapely.distance(world.land, shapely.points(p)) < 150.0)
        out += list(p[ok])
    return np.array(out[:n])


def rig(env, kind: str, vessels: int, seed: int = 1):
    """Roster of `vessels` vessels with hulls and the LiDAR `kind`, their banks and the site."""
    roster = Roster()
    slots = roster.update("w0", tuple(f"v{i}" for i in range(vessels))).slots
    xy = near_shore(env.world, vessels, seed)
    yaw = np.random.default_rng(seed).uniform(-np.pi, np.pi, vessels)
    quat = np.column_stack([np.zeros((vessels, 2)), np.sin(yaw / 2), np.cos(yaw / 2)])
    pos = np.column_stack([xy, np.zeros(vessels)])
    roster.set_state(slots, pos, quat, np.zeros((vessels, 6)), np.zeros((vessels, 6)), None)
    banks = SensorBanks(KINDS, roster.capacity)
    params = parse_suite({kind: SUITES[kind]}, "bench")[kind]
    for name, slot in roster.slot_of.items():
        roster.set_hull(slot, *HULL)
        banks[kind].configure(slot, params, 1, name, 0)
    return roster, banks[kind], slots, Site(env, None, np.zeros(3), 1500.0, {})


def time_scans(env, kind: str, vessels: int, repeat: int) -> tuple[float, int, float]:
    """(fastest wall time of one call scanning every vessel (s), beams per scan, fraction of beams returned)."""
    roster, bank, slots, site = rig(env, kind, vessels)
    sampler = SAMPLERS[kind]
    best, returned, beams = np.inf, 0.0, 0
    for k in range(repeat + 1):  # the first call compiles/warms up
        due = slots
        start = time.perf_counter()
        out = sampler(bank, due, k * 100_000_000, roster, site)
        elapsed = time.perf_counter() - start
        bank.schedule(due, k * 100_000_000, out.period_s)
        if k:
            best = min(best, elapsed)
        if kind == "lidar_2d":
            r = np.array(out.columns[0])
            beams, returned = r.shape[1], float(np.isfinite(r).mean())
        else:
            beams = 16 * 1800
            returned = sum(len(c) for c in out.columns[0]) / (beams * vessels)
    return best, beams, returned


def bench_node(env, vessels: int, sim_seconds: float = 1.0, windows: int = 3) -> tuple[float, int]:
    """sensor_publisher (in process, over Fast DDS, no subscriber) with `vessels` vessels each carrying the 2-D
    LiDAR at 10 Hz, fed fleet states at 100 Hz through its callback: (best wall time of sim_seconds of sim time
    (s), scans published in it)."""
    import rclpy
    import yaml
    from rclpy.parameter import Parameter

    from lotusim_core.ros.ros_arrays import to_float64_array
    from lotusim_interfaces.msg import FleetRoster, FleetState, VesselInfo
    from lotusim_sensors.sensor_publisher import SensorPublisher

    names = [f"v{i}" for i in range(vessels)]
    context = rclpy.Context()
    rclpy.init(context=context)
    table = {name: {"sensors": {"lidar_2d": SUITES["lidar_2d"]}} for name in names}
    node = SensorPublisher(context=context, parameter_overrides=[
        Parameter("vessels_yaml", value=yaml.safe_dump(table)), Parameter("seed", value=1)])  # fmt: skip
    node._env = env
    node._on_roster(FleetRoster(worker="w0", vessels=[VesselInfo(name=name, worker="w0") for name in names]))
    xy = near_shore(env.world, vessels, 1)
    yaw = np.random.default_rng(1).uniform(-np.pi, np.pi, vessels)
    msg = FleetState(worker="w0", names=names)
    msg.position = to_float64_array(np.column_stack([xy, np.zeros(vessels)]))
    msg.orientation = to_float64_array(np.column_stack([np.zeros((vessels, 2)), np.sin(yaw / 2), np.cos(yaw / 2)]))
    msg.twist = to_float64_array(np.zeros((vessels, 6)))
    msg.accel = to_float64_array(np.zeros((vessels, 6)))
    node._on_fleet_state(msg)  # registers the vessels (publishers) and publishes the first scans
    steps = int(round(sim_seconds * 100))
    best, count = np.inf, 0
    for window in range(windows):  # best of several windows: the machine is shared
        published0, start = node.published, time.perf_counter()
        for k in range(window * steps + 1, (window + 1) * steps + 1):
            msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(k * 10_000_000, 1_000_000_000)
            node._on_fleet_state(msg)
        wall = time.perf_counter() - start
        if wall < best:
            best, count = wall, node.published - published0
    node.destroy_node()
    context.try_shutdown()
    return best, count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vessels", type=int, nargs="+", default=[1, 10, 100])
    parser.add_argument("--vessels-3d", type=int, nargs="+", default=[1, 10])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--node-vessels",
        type=int,
        nargs="*",
        default=[100],
        help="also run sensor_publisher over DDS with this many 2-D LiDAR vessels (none: skip)",
    )
    args = parser.parse_args()
    env = scene()
    print(f"scene: Brest coast, {len(env.world.segments)} coast edges, {env.world.object_count} buoys")
    print(f"{'sensor':>9} {'vessels':>7} {'beams':>6} {'returned':>8} {'ms/call':>8} {'ms per scan':>11} "
          f"{'10 Hz load':>10}")  # fmt: skip
    for kind, sizes in (("lidar_2d", args.vessels), ("lidar_3d", args.vessels_3d)):
        for v in sizes:
            wall, beams, returned = time_scans(env, kind, v, args.repeat)
            load = wall * 10.0  # wall seconds per sim second at 10 Hz
            print(f"{kind:>9} {v:>7} {beams:>6} {returned:>8.1%} {wall * 1e3:>8.2f} {wall * 1e3 / v:>11.3f} "
                  f"{load:>9.0%}")  # fmt: skip
    print("10 Hz load: wall time of one simulated second of scans (< 100 %: real time on this machine)")
    for v in args.node_vessels:
        wall, scans = bench_node(env, v)
        print(
            f"sensor_publisher, {v} vessels with a 360-beam 2-D LiDAR at 10 Hz, fleet states at 100 Hz: "
            f"{scans} scans published in 1 s of sim time, {wall * 1e3:.0f} ms of wall time (RTF {1.0 / wall:.1f})"
        )


if __name__ == "__main__":
    main()
