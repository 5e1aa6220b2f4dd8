"""Benchmark of the sensor layer: model cost (ROS-free) and sensor_publisher throughput over DDS.

Standard suite per vessel (issue 6): IMU 50 Hz, pressure 10 Hz (+ depth), DVL 5 Hz (+ altitude), GPS 5 Hz at
the surface (+ velocity) = 90 messages per vessel per simulated second. Vessels float at the surface over a flat
50 m bottom (DVL bottom lock, GPS fix). The node is fed FleetState messages at 100 Hz sim time through its
callback (no DDS hop on the input side), its sensor messages go out over Fast DDS (no subscriber unless
--subscriber). For each fleet size we time three spans of 1 s of sim time and keep the fastest (the machine is
shared): real-time factor = 1 s / wall time.

Usage: python bench/bench_sensors.py [--sizes 10 50 100 200 400] [--subscriber] [--out bench/results]
Prints a table and writes sensors.png + sensors.csv. Numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import yaml

STANDARD_SUITE = {
    "imu": {"rate_hz": 50},
    "pressure": {"rate_hz": 10},
    "dvl": {"max_rate_hz": 5, "position_frd_m": [0.0, 0.0, 0.3]},
    "gps": {"rate_hz": 5, "position_frd_m": [0.0, 0.0, -0.5]},
}
MSGS_PER_VESSEL_S = 50 + 2 * 10 + 2 * 5 + 2 * 5


def bench_models(n: int, repeats: int = 50) -> dict[str, float]:
    """Wall time (us) of one batched evaluation of each model for n vessels."""
    from lotusim_core.base.geodesy import GeodeticOrigin
    from lotusim_env.bathymetry import FlatSeabed
    from lotusim_sensors import dvl, gps, imu, noise, pressure
    from lotusim_sensors.suite import parse_suite, stack_params

    suite = parse_suite(STANDARD_SUITE, "bench")
    p = {k: stack_params(k, [suite[k]] * n) for k in suite}
    keys = np.array([noise.stream_key(0, f"v{i}", "x") for i in range(n)], dtype=np.uint64)
    counters = np.zeros(n, dtype=np.uint64)
    pos = np.zeros((n, 3))
    q = np.tile([0.0, 0.0, 0.0, 1.0], (n, 1))
    twist = np.tile([1.0, 0, 0, 0, 0, 0.01], (n, 1))
    zeros = np.zeros((n, 3))
    seabed = FlatSeabed(50.0).seabed_depth_m
    origin = GeodeticOrigin(36.8, -121.9)
    cases = {
        "noise(15)": lambda: noise.normal(keys, counters, 15),
        "imu": lambda: imu.imu_measure(
            p["imu"], zeros, zeros, np.full(n, 0.02), q, np.zeros((n, 6)), twist, noise.normal(keys, counters, 15)
        ),  # fmt: skip
        "pressure": lambda: pressure.pressure_measure(
            pos, p["pressure"]["depth_noise_std_m"], 1025.0, noise.normal(keys, counters, 1)
        ),  # fmt: skip
        "gps": lambda: gps.gps_measure(
            p["gps"], pos, q, twist, origin, noise.normal(keys, counters, 6), noise.uniform(keys, counters, 1)
        ),  # fmt: skip
        "dvl": lambda: dvl.dvl_measure(
            p["dvl"], pos, q, twist, lambda pts: np.zeros_like(pts), seabed, noise.normal(keys, counters, 8)
        ),  # fmt: skip
    }
    out = {}
    for name, fn in cases.items():
        fn()
        start = time.perf_counter()
        for _ in range(repeats):
            fn()
        out[name] = (time.perf_counter() - start) / repeats * 1e6
    return out


def bench_node(n: int, subscriber: bool, sim_seconds: float = 1.0, windows: int = 3) -> dict[str, float]:
    """Run sensor_publisher with n standard-suite vessels; time `windows` spans of sim_seconds, keep the best."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import Imu

    from lotusim_core.ros.ros_arrays import to_float64_array
    from lotusim_env.environment import build_environment
    from lotusim_interfaces.msg import FleetRoster, FleetState, VesselInfo
    from lotusim_sensors.sensor_publisher import SensorPublisher

    names = [f"v{i}" for i in range(n)]
    context = rclpy.Context()
    rclpy.init(context=context)
    vessels = {name: {"sensors": STANDARD_SUITE} for name in names}
    node = SensorPublisher(
        context=context,
        parameter_overrides=[Parameter("vessels_yaml", value=yaml.safe_dump(vessels)), Parameter("seed", value=1)],
    )
    node._env = build_environment({"bathymetry": {"model": "flat", "depth_m": 50.0}})
    # the roster worker w0 would latch (model-less vessels: their suites come from vessels_yaml)
    node._on_roster(FleetRoster(worker="w0", vessels=[VesselInfo(name=name, worker="w0") for name in names]))
    received = [0]
    executor = SingleThreadedExecutor(context=context)
    if subscriber:
        sub_node = rclpy.create_node("bench_sub", context=context)
        for name in names:
            sub_node.create_subscription(
                Imu, f"/{name}/imu/data", lambda _m: received.__setitem__(0, received[0] + 1), 10
            )
        executor.add_node(sub_node)
    rng = np.random.default_rng(0)
    msg = FleetState(worker="w0", names=names)
    msg.position = to_float64_array(np.column_stack([rng.uniform(-500, 500, (n, 2)), np.zeros(n)]))
    msg.orientation = to_float64_array(np.tile([0.0, 0.0, 0.0, 1.0], (n, 1)))
    msg.twist = to_float64_array(np.tile([1.0, 0.0, 0.0, 0.0, 0.0, 0.0], (n, 1)))
    msg.accel = to_float64_array(np.zeros((n, 6)))
    start = time.perf_counter()
    node._on_fleet_state(msg)  # registers the vessels: publishers are created here
    setup_s = time.perf_counter() - start
    steps = int(round(sim_seconds * 100))
    walls, counts = [], []
    for window in range(windows):  # best of several 1 s windows: the machine is shared
        published0 = node.published
        start = time.perf_counter()
        for k in range(window * steps + 1, (window + 1) * steps + 1):
            msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(k * 10_000_000, 1_000_000_000)
            node._on_fleet_state(msg)
            if subscriber:
                executor.spin_once(timeout_sec=0.0)
        walls.append(time.perf_counter() - start)
        counts.append(node.published - published0)
    best = int(np.argmin(walls))
    wall, published = walls[best], counts[best]
    executor.shutdown()
    node.destroy_node()
    context.try_shutdown()
    return {"setup_s": setup_s, "wall_s": wall, "published": published, "rtf": sim_seconds / wall,
            "msgs_per_s": published / wall}  # fmt: skip


def bench_message_fill(repeats: int = 20000) -> dict[str, float]:
    """Per-message costs (us): build a new Imu, refill a reused one, publish it; patch a pre-serialized Imu
    (lotusim_core.ros.prepacked, what the node does) and publish those bytes. No subscriber."""
    import rclpy
    from sensor_msgs.msg import Imu

    from lotusim_core.ros.prepacked import RawMessage
    from lotusim_sensors.sensor_publisher import IMU_FIELDS

    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("bench_fill", context=context)
    pub = node.create_publisher(Imu, "/bench/imu", 10)
    row = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.1, 0.1, 0.2, 9.8]
    msg = Imu()
    t0 = time.perf_counter()
    for _ in range(repeats):
        Imu()
    t1 = time.perf_counter()
    for _ in range(repeats):
        a, g, o = msg.linear_acceleration, msg.angular_velocity, msg.orientation
        o.x, o.y, o.z, o.w, g.x, g.y, g.z, a.x, a.y, a.z = row
    t2 = time.perf_counter()
    for _ in range(repeats):
        pub.publish(msg)
    t3 = time.perf_counter()
    raw = RawMessage(msg, IMU_FIELDS)
    for k in range(repeats):
        raw.pack([k, 0, *row])
    t4 = time.perf_counter()
    data = raw.pack([0, 0, *row])
    for _ in range(repeats):
        pub.publish(data)
    t5 = time.perf_counter()
    node.destroy_node()
    context.try_shutdown()
    return {"construct_us": (t1 - t0) / repeats * 1e6, "refill_us": (t2 - t1) / repeats * 1e6,
            "publish_us": (t3 - t2) / repeats * 1e6, "cdr_pack_us": (t4 - t3) / repeats * 1e6,
            "publish_raw_us": (t5 - t4) / repeats * 1e6}  # fmt: skip


def plot(data: np.ndarray, out: Path) -> None:
    """Real-time factor and messages per second against fleet size (columns of sensors.csv)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes, rtf = data[:, 0], data[:, 3]
    fig, ax1 = plt.subplots(figsize=(6, 4))
    lines = ax1.plot(sizes, rtf, "o-", label="real-time factor")
    ax1.axhline(1.0, color="grey", ls="--")
    ax1.set_xlabel("vessels (standard suite, 90 msgs/s each)")
    ax1.set_ylabel("real-time factor")
    ax2 = ax1.twinx()
    lines += ax2.plot(sizes, data[:, 4], "s-", color="tab:orange", label="messages / s")
    ax2.set_ylabel("messages published per wall second")
    ax1.legend(lines, [line.get_label() for line in lines], loc="center right")
    ax1.set_title("sensor_publisher throughput (shared 2-core machine)")
    fig.tight_layout()
    fig.savefig(out / "sensors.png", dpi=100)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 50, 100, 200, 400])
    parser.add_argument("--subscriber", action="store_true", help="subscribe to every IMU topic in-process")
    parser.add_argument("--out", default="bench/results")
    parser.add_argument("--replot", action="store_true", help="only redraw sensors.png from OUT/sensors.csv")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.replot:
        plot(np.loadtxt(out / "sensors.csv", delimiter=",", skiprows=1, ndmin=2), out)
        return

    print("model cost, one batched evaluation (us):")
    for n in (1, 100, 1000):
        costs = bench_models(n)
        print(f"  N={n:5d}  " + "  ".join(f"{k} {v:8.1f}" for k, v in costs.items()))
    fill = bench_message_fill()
    print("per message (us): " + "  ".join(f"{k} {v:.2f}" for k, v in fill.items()))

    print(f"\nnode, standard suite ({MSGS_PER_VESSEL_S} msgs / vessel / sim s), 1 s of sim time at 100 Hz states:")
    print(f"{'vessels':>8} {'setup s':>8} {'wall s':>8} {'RTF':>7} {'msgs/s':>9} {'us/msg':>7}")
    rows = []
    for n in args.sizes:
        r = bench_node(n, args.subscriber)
        rows.append((n, r["setup_s"], r["wall_s"], r["rtf"], r["msgs_per_s"]))
        print(f"{n:8d} {r['setup_s']:8.2f} {r['wall_s']:8.2f} {r['rtf']:7.2f} {r['msgs_per_s']:9.0f} "
              f"{1e6 / r['msgs_per_s']:7.1f}")  # fmt: skip
    data = np.array(rows)
    np.savetxt(out / "sensors.csv", data, delimiter=",", header="vessels,setup_s,wall_s,rtf,msgs_per_s", comments="")
    sizes, rtf = data[:, 0], data[:, 3]
    real_time = sizes[rtf >= 1.0]
    largest = int(real_time.max()) if real_time.size else 0
    capacity = float(np.max(data[:, 4]))
    print(f"\nlargest measured fleet in real time: {largest} vessels; best throughput {capacity:.0f} msgs/s "
          f"= {capacity / MSGS_PER_VESSEL_S:.0f} standard suites")  # fmt: skip

    plot(data, out)
    print(f"wrote {out / 'sensors.png'} and {out / 'sensors.csv'}")


if __name__ == "__main__":
    main()
