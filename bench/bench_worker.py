"""The dynamics worker's own cost per step, in-process: physics + /clock + fleet state + odometry publishing, with
no subscriber in another process (what `lotusim bench fleet` adds on top is the middleware's delivery).

The worker runs in lockstep in this process (its own ROS domain: ROS_DOMAIN_ID as set, 0 if unset), vessels are
created through its command handler, and `advance(steps)` is timed: the minimum over repeats, the figure that
a busy shared machine disturbs least. Settings of the speed goals' fast mode (docs/performance.md): 0.03 s step,
/clock every step, fleet state and odometry at 10 Hz of sim time.

python bench/bench_worker.py [--vessels 1,25,100] [--repeats 15] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import timeit

import rclpy
from rclpy.parameter import Parameter

from lotusim_interfaces.msg import FleetCommandItem, VesselDescription
from lotusim_interfaces.srv import WorkerCommand
from lotusim_physics.dynamics_node import DynamicsWorker


def worker_with(vessels: int, model: str, context) -> DynamicsWorker:
    params = [("mode", "lockstep"), ("step_s", 0.03), ("fleet_state_rate_hz", 10.0), ("odom_rate_hz", 10.0)]
    worker = DynamicsWorker(context=context, parameter_overrides=[Parameter(k, value=v) for k, v in params])
    request = WorkerCommand.Request()
    for k in range(vessels):
        vessel = VesselDescription(name=f"{model}_{k:05d}", model=model, pose_frame=VesselDescription.POSE_ENU)
        position = vessel.pose.position
        position.x, position.y, position.z = 5.0 * (k % 100), 5.0 * (k // 100), -20.0
        request.items.append(FleetCommandItem(command=FleetCommandItem.CREATE, vessel=vessel))
    results = worker._on_command(request, WorkerCommand.Response()).results
    if not all(r.ok for r in results):
        raise RuntimeError(f"bench worker: creates failed: {sorted({r.reason for r in results if not r.ok})}")
    while worker.endpoint_queue.pending:  # every vessel's topics, as in a settled run
        worker._create_pending_endpoints(budget_s=1.0)
    return worker


def measure(vessels: int, model: str, repeats: int) -> dict:
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        worker = worker_with(vessels, model, context)
        steps = max(30, 3000 // max(1, vessels))  # about the same wall time per repeat at every size
        worker.advance(steps)  # warm: compiled kernels, caches, output layouts
        best = min(timeit.repeat(lambda: worker.advance(steps), number=1, repeat=repeats)) / steps
        worker.destroy_node()
    finally:
        context.try_shutdown()
    return {"vessels": vessels, "model": model, "us_per_step": 1e6 * best, "rtf_bound": 0.03 / best}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench_worker", description=__doc__.split("\n\n")[0])
    parser.add_argument("--vessels", default="1,25,100", help="comma-separated fleet sizes")
    parser.add_argument("--model", default="lrauv", help="catalogue model")
    parser.add_argument("--repeats", type=int, default=15, help="timed repeats (the minimum is reported)")
    parser.add_argument("--json", action="store_true", help="one JSON object per row instead of a table")
    args = parser.parse_args(argv)
    sizes = [int(v) for v in args.vessels.split(",") if v.strip()]
    if not sizes or min(sizes) < 1 or args.repeats < 1:
        parser.error("--vessels: positive fleet sizes; --repeats: >= 1")
    if not args.json:
        print(f"{'vessels':>8} {'us/step':>9} {'us/step/vessel':>15} {'RTF bound':>10}")
    for n in sizes:
        row = measure(n, args.model, args.repeats)
        if args.json:
            print(json.dumps(row), flush=True)
        else:
            per = row["us_per_step"] / n
            print(f"{n:>8} {row['us_per_step']:>9.1f} {per:>15.2f} {row['rtf_bound']:>10.0f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
