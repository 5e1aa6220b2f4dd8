"""Several dynamics workers: a bulk goal over two workers is sent as a few large requests (not one per item),
and no worker gets more requests at once than a service's queue holds (their answers would overwrite each
other and be lost, each lost answer costing the MAS server command_timeout_s)."""

from __future__ import annotations

import time

import pytest

rclpy = pytest.importorskip("rclpy")

from lotusim_core.fleet_registry import FleetRegistry  # noqa: E402
from lotusim_core.geodesy import GeodeticOrigin  # noqa: E402
from simnodes import Sim, create_item  # noqa: E402


def test_a_goal_over_two_workers_is_one_batch_per_worker():
    """The least-loaded choice alternates between the workers; the batches still hold each worker's items in
    goal order, at most batch_size each, the workers taking turns."""
    registry = FleetRegistry(GeodeticOrigin(48.0, -4.0, 0.0))
    registry.add_worker("worker_0")
    registry.add_worker("worker_1")
    plan = registry.plan([create_item(f"v{k}", "lrauv", (float(k), 0.0, -5.0)) for k in range(9)])
    assert [p.worker for p in plan.accepted][:4] == ["worker_0", "worker_1", "worker_0", "worker_1"]
    batches = [[(p.worker, p.item.vessel.name) for p in batch] for batch in plan.batches(3)]
    assert batches == [
        [("worker_0", "v0"), ("worker_0", "v2"), ("worker_0", "v4")],
        [("worker_1", "v1"), ("worker_1", "v3"), ("worker_1", "v5")],
        [("worker_0", "v6"), ("worker_0", "v8")],
        [("worker_1", "v7")],
    ]


@pytest.mark.parametrize(
    "workers, mas_params",
    [
        (2, {}),  # the demo fleet's case: 99 items alternating between 2 workers
        (1, {"batch_size": 1}),  # one request per item: at most REQUESTS_IN_FLIGHT at once
    ],
)
def test_a_large_goal_is_answered_at_once(ros_context, workers, mas_params):
    """99 creates are all carried out and answered within seconds (before: 99 one-item requests in flight, most
    answers lost, each waited for command_timeout_s)."""
    sim = Sim(ros_context, mode="lockstep", workers=workers, mas_params={"command_timeout_s": 60.0, **mas_params})
    try:
        start = time.monotonic()
        result = sim.command([create_item(f"v{k:02d}", "lrauv", (5.0 * k, 0.0, -10.0)) for k in range(99)])
        elapsed = time.monotonic() - start
        assert result.succeeded == 99, [r.reason for r in result.results if not r.ok][:3]
        assert elapsed < 20.0, f"99 creates took {elapsed:.1f} s"
        assert sum(len(w.fleet.names) for w in sim.workers) == 99
        if workers == 2:
            assert [len(w.fleet.names) for w in sim.workers] == [50, 49]
    finally:
        sim.close()


@pytest.mark.timeout(600)
@pytest.mark.skip(
    reason="known defect since lotusim run holds and releases the clock master (run_clock): in CI the follower's "
    "fleet states carried stamps the master never published or came 4.4 s later; to fix, then re-enable"
)
def test_the_demo_fleet_runs_on_two_workers_under_lotusim_run(tmp_path, own_domain_env):
    """`lotusim run mixed_fleet_brest --workers 2 --rtf 10` (issue: 2 of 99 vessels spawned, sim time stuck at
    0 s): all 99 vessels are spawned, both workers advance, and the follower is on the master's clock: its fleet
    states carry the master's stamps, each reached less than 3 s of wall time after the master (the follower
    runs behind when the host cannot hold RTF 10, but does not drift away)."""
    import os
    import signal
    import struct
    import subprocess
    import sys

    from test_faults_cli import Probe, _wait

    from lotusim_interfaces.msg import FleetState

    out = tmp_path / "run.out"
    command = [sys.executable, "-m", "lotusim_core.cli", "run", "mixed_fleet_brest", "--workers", "2"]
    command += ["--rtf", "10", "--duration", "60", "--headless", "--log-dir", str(tmp_path / "logs")]
    with open(out, "w") as sink:
        run = subprocess.Popen(
            command,
            stdout=sink,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env=own_domain_env,
        )
    probe = Probe(int(own_domain_env["ROS_DOMAIN_ID"]))
    latest = {"worker_0": 0, "worker_1": 0}
    master_at: dict[int, float] = {}  # the master's stamps (ns) -> when they arrived (monotonic s)
    lags: list[float] = []  # per follower fleet state: wall time since the master's state of the same stamp

    def on_state(raw: bytes) -> None:
        sec, nanosec, frame_len = struct.unpack_from("<iII", raw, 4)
        offset = 16 + frame_len
        offset += -offset % 4
        worker_len = struct.unpack_from("<I", raw, offset)[0]
        worker = raw[offset + 4 : offset + 3 + worker_len].decode()
        stamp = latest[worker] = sec * 1_000_000_000 + nanosec
        if worker == "worker_0":
            master_at[stamp] = time.monotonic()
        elif stamp in master_at:
            lags.append(time.monotonic() - master_at[stamp])
        else:
            lags.append(float("inf"))  # not a stamp of the master's clock

    probe.node.create_subscription(FleetState, "/lotusim/fleet_state", on_state, 100, raw=True)
    try:
        _wait("the spawn", lambda: "vessels spawned" in out.read_text(), probe, run, 240.0)
        assert "99 vessels spawned (0 failed)" in out.read_text()
        start = dict(latest)
        # both advance (waited for: on a loaded host the probe may match a worker's writer seconds late)
        _wait("both workers advancing", lambda: all(latest[w] - start[w] > 1e9 for w in latest), probe, run, 60.0)
        assert len(lags) > 20 and sorted(lags)[len(lags) // 2] < 3.0, lags[-20:]
        assert run.wait(timeout=240) == 0, out.read_text()[-2000:]
        text = out.read_text()
        assert "mixed_fleet_brest: 99 vessels, 60." in text, text[-2000:]
    finally:
        probe.close()
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGINT)
            run.wait(timeout=60)
