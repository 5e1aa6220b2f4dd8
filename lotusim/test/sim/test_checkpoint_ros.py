"""Checkpoints over real DDS (/lotusim/checkpoint of the MAS server, the workers' services): a restore after
moves, deletes and creates gives back the saved simulation bit for bit; malformed, hostile and path-like
requests are refused in one line with every worker's fleet and the MAS listing unchanged and no code run; and
`lotusim checkpoint` end to end against `lotusim run`."""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")

from cli_probe import run_cli, start_run, stop_run, wait_for_text  # noqa: E402
from std_msgs.msg import Float64  # noqa: E402
from test_checkpoint import Payload, _malformations, _resign  # noqa: E402

from lotusim_interfaces.msg import FleetCommandItem, VesselDescription  # noqa: E402
from lotusim_interfaces.srv import Checkpoint  # noqa: E402
from simnodes import Sim, create_item, delete_item, spin_until  # noqa: E402

pytestmark = pytest.mark.ros  # starts DDS participants (nodes, node processes or the ros2 CLI)
SAVE, RESTORE, LIST = Checkpoint.Request.SAVE, Checkpoint.Request.RESTORE, Checkpoint.Request.LIST


@pytest.fixture
def ck_dir(tmp_path, monkeypatch) -> Path:
    """The nodes' checkpoint directory (LOTUSIM_CHECKPOINT_DIR), and a working directory of its own (where the
    former pickle checkpoints were read from when given a relative path)."""
    root = tmp_path / "checkpoints"
    monkeypatch.setenv("LOTUSIM_CHECKPOINT_DIR", str(root))
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    return root


@pytest.fixture
def sim(ros_context, ck_dir):
    s = Sim(ros_context, mode="lockstep", step_s=0.02, odom_rate_hz=10.0)
    yield s
    s.close()


def _call(sim: Sim, operation: int, name: str) -> Checkpoint.Response:
    client = getattr(sim, "_ck_client", None) or sim.client.create_client(Checkpoint, "/lotusim/checkpoint")
    sim._ck_client = client
    spin_until(sim.executor, client.service_is_ready, 10.0, "checkpoint service")
    future = client.call_async(Checkpoint.Request(operation=operation, path=name))
    spin_until(sim.executor, future.done, 30.0, "checkpoint reply")
    return future.result()


def _listing(sim: Sim) -> list[tuple]:
    """The MAS server's listing: (name, worker, status, x, y, z) per vessel, sorted."""
    return sorted(
        (v.name, v.worker, v.status, v.pose.position.x, v.pose.position.y, v.pose.position.z)
        for v in sim.listing().values()
    )


def _fleet_of(sim: Sim) -> tuple:
    """Everything of the workers' fleets a restore would change: names, step counter, every state array."""
    return tuple(
        (tuple(w.fleet.names), w.iteration, {k: v.copy() for k, v in w.fleet.state_arrays().items()})
        for w in sim.workers
    )


def _same_fleet(a: tuple, b: tuple) -> bool:
    return all(
        x[0] == y[0] and x[1] == y[1] and all(np.array_equal(x[2][k], y[2][k]) for k in x[2])
        for x, y in zip(a, b, strict=True)
    )


def _three_vessels(sim: Sim) -> None:
    """lrauv, bluerov2_heavy and wamv (the fleet of test_checkpoint's malformations), propeller turning."""
    result = sim.command(
        [
            create_item("auv", "lrauv", (0, 0, -10)),
            create_item("rov", "bluerov2_heavy", (0, 5, -3)),
            create_item("usv", "wamv", (0, 20, 0)),
        ]
    )
    assert result.succeeded == 3, [r.reason for r in result.results]
    pub = sim.client.create_publisher(Float64, "/auv/thrusters/propeller/cmd", 10)
    spin_until(sim.executor, lambda: pub.get_subscription_count() > 0, 10.0, "subscription")
    pub.publish(Float64(data=30.0))
    sim.spin_for(0.2)


def test_restore_after_moves_deletes_and_creates_continues_bit_for_bit(sim, ck_dir):
    from rclpy.qos import DurabilityPolicy, QoSProfile

    from lotusim_interfaces.msg import EnvironmentConfig

    latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    env_pub = sim.client.create_publisher(EnvironmentConfig, "/lotusim/environment", latched)
    env_yaml = "seed: 4\ncurrent: {model: gauss_markov, east: {mean: 0.2, mu: 0.01, stationary_std: 0.05}}"
    env_pub.publish(EnvironmentConfig(revision=1, config_yaml=env_yaml))
    spin_until(sim.executor, lambda: sim.worker.environment_yaml == env_yaml, 10.0, "environment applied")
    _three_vessels(sim)
    sim.step(100)
    saved = _call(sim, SAVE, "before_move")
    assert saved.success, saved.message
    assert saved.vessel_count == 3 and (saved.sim_time.sec, saved.sim_time.nanosec) == (2, 0)
    listed_at_save = _listing(sim)
    sim.step(150)
    reference = _fleet_of(sim)

    moved = VesselDescription(name="auv", pose_frame=VesselDescription.POSE_ENU)
    moved.pose.position.x = 500.0
    result = sim.command(
        [
            FleetCommandItem(command=FleetCommandItem.MOVE, vessel=moved),
            delete_item("rov"),
            create_item("extra", "remus100", (9, 9, -1)),
        ]
    )
    assert result.succeeded == 3, [r.reason for r in result.results]
    sim.step(7)
    restored = _call(sim, RESTORE, "before_move")
    assert restored.success, restored.message
    assert restored.vessel_count == 3 and sim.worker.iteration == 100
    assert sim.worker.fleet.names == ["auv", "rov", "usv"]
    assert _listing(sim) == listed_at_save, "the MAS lists the restored fleet (extra gone, rov back, auv home)"
    sim.step(150)
    assert _same_fleet(_fleet_of(sim), reference), "restored run differs from the saved run's continuation"
    listing = _call(sim, LIST, "")
    assert listing.success and list(listing.names) == ["before_move"], listing.message
    assert "before_move: sim time 2.000 s, 3 vessels (worker_0)" in listing.message


def test_malformed_hostile_and_path_like_checkpoints_change_nothing(sim, ck_dir, tmp_path):
    _three_vessels(sim)
    sim.step(20)
    sentinel = tmp_path / "SENTINEL"
    # a pickle payload where the former service read `<path>.<worker>` (relative to the working directory)
    (Path.cwd() / "planted.worker_0").write_bytes(pickle.dumps(Payload(sentinel)))
    before, listed = _fleet_of(sim), _listing(sim)
    reply = _call(sim, RESTORE, "planted")
    assert not reply.success and "no checkpoint named 'planted'" in reply.message, reply.message
    assert not sentinel.exists(), "a checkpoint file ran code"
    assert _same_fleet(_fleet_of(sim), before) and _listing(sim) == listed
    good = _call(sim, SAVE, "good")
    assert good.success, good.message
    sim.step(5)
    cwd = Path.cwd()
    tried = changed = listing_changed = 0
    cases = _malformations(sentinel)
    for k, (case, (corrupt, resign)) in enumerate(cases.items()):
        name = f"bad_{k}"
        shutil.copytree(ck_dir / "good", ck_dir / name)
        for file in ck_dir.glob(f"{name}/*.json"):  # the copy names itself
            file.write_text(file.read_text().replace('"checkpoint": "good"', f'"checkpoint": "{name}"'))
        _resign(ck_dir, name)
        corrupt(ck_dir / name)
        if resign:
            _resign(ck_dir, name)
        # where the former service read `<path>.<worker>` from: a pickle payload, or a state missing a key
        planted = pickle.dumps(Payload(sentinel)) if "pickle" in case else pickle.dumps({"step_ns": 20_000_000})
        (cwd / f"{name}.worker_0").write_bytes(planted)
        before, listed = _fleet_of(sim), _listing(sim)
        reply = _call(sim, RESTORE, name)
        tried += 1
        assert not reply.success and reply.message and "\n" not in reply.message, (case, reply.message)
        changed += not _same_fleet(_fleet_of(sim), before)
        listing_changed += _listing(sim) != listed
    print(f"\nmalformed checkpoints tried over DDS: {tried}, fleets changed: {changed}, listings changed: "
          f"{listing_changed}, code run: {int(sentinel.exists())}")  # fmt: skip
    assert not sentinel.exists(), "a checkpoint file ran code"
    assert (changed, listing_changed) == (0, 0)

    outside_before = sorted(p for p in tmp_path.rglob("*") if ck_dir not in p.parents and p != ck_dir)
    for name in ["../escape", str(tmp_path / "abs" / "x"), "a/b", "..", "x" * 65, "", "bad name"]:
        for operation in (SAVE, RESTORE):
            before = _fleet_of(sim)
            reply = _call(sim, operation, name)
            assert not reply.success and "expected a name" in reply.message, (name, reply.message)
            assert _same_fleet(_fleet_of(sim), before)
    # the worker's own service, as any DDS peer can call it
    direct = sim.client.create_client(Checkpoint, "/lotusim/worker_0/checkpoint")
    spin_until(sim.executor, direct.service_is_ready, 10.0, "worker checkpoint service")
    for name in ["../escape", str(tmp_path / "abs" / "x"), "good/../good", "bad_0/x"]:
        for operation in (SAVE, RESTORE, Checkpoint.Request.CHECK):
            before = _fleet_of(sim)
            future = direct.call_async(Checkpoint.Request(operation=operation, path=name))
            spin_until(sim.executor, future.done, 10.0, "worker checkpoint reply")
            assert not future.result().success and "expected a name" in future.result().message
            assert _same_fleet(_fleet_of(sim), before)
    outside_after = sorted(p for p in tmp_path.rglob("*") if ck_dir not in p.parents and p != ck_dir)
    assert outside_after == outside_before, "a checkpoint request wrote outside the checkpoint directory"
    assert _call(sim, RESTORE, "good").success, "the good checkpoint still restores"


def test_two_workers_are_saved_at_one_instant_and_restored_together(ros_context, ck_dir):
    sim = Sim(ros_context, mode="lockstep", step_s=0.02, workers=2)
    try:
        for k in range(2):
            item = create_item(f"v{k}", "lrauv", (0, 10 * k, -5))
            item.vessel.worker = f"worker_{k}"
            assert sim.command([item]).succeeded == 1
        sim.step(50)
        spin_until(sim.executor, lambda: sim.workers[1].iteration == 50, 10.0, "follower at the master's clock")
        saved = _call(sim, SAVE, "pair")
        assert saved.success and saved.vessel_count == 2, saved.message
        sim.step(30)
        spin_until(sim.executor, lambda: sim.workers[1].iteration == 80, 10.0, "follower at the master's clock")
        reference = _fleet_of(sim)
        assert sim.command([delete_item("v0"), delete_item("v1")]).succeeded == 2
        restored = _call(sim, RESTORE, "pair")
        assert restored.success, restored.message
        assert [w.fleet.names for w in sim.workers] == [["v0"], ["v1"]] and [w.iteration for w in sim.workers] == [
            50,
            50,
        ]
        sim.step(30)
        spin_until(sim.executor, lambda: sim.workers[1].iteration == 80, 10.0, "follower at the master's clock")
        assert _same_fleet(_fleet_of(sim), reference)
        assert [v[0] for v in _listing(sim)] == ["v0", "v1"]

        # a worker that fails after every CHECK passed (injected): the others are restored, the failure is
        # reported, and the MAS listing is what the workers have
        def fail(_state):
            raise OSError("disk gone (injected)")

        sim.workers[1].restore = fail
        assert sim.command([delete_item("v0"), delete_item("v1")]).succeeded == 2
        partly = _call(sim, RESTORE, "pair")
        assert not partly.success and "only partly restored" in partly.message and "injected" in partly.message
        assert [w.fleet.names for w in sim.workers] == [["v0"], []]
        assert [v[0] for v in _listing(sim)] == ["v0"]
    finally:
        sim.close()


SCENARIO = """
name: checkpoint_cli
seed: 3
world:
  origin: {latitude_deg: 48.3, longitude_deg: -4.6}
physics: {step_s: 0.02, mode: realtime}
vessels:
  - {name: auv_1, model: lrauv, pose: {position: [0.0, 0.0, -10.0], yaw_deg: 0.0}}
"""


def _lotusim(*args: str, env: dict) -> subprocess.CompletedProcess:
    return run_cli(*args, env=env, timeout_s=180.0)


def test_checkpoint_cli_against_lotusim_run(tmp_path, own_domain_env):
    env = dict(own_domain_env, LOTUSIM_CHECKPOINT_DIR=str(tmp_path / "ck"))
    scenario = tmp_path / "checkpoint_cli.yaml"
    scenario.write_text(SCENARIO)
    run = start_run([str(scenario)], tmp_path / "run.out", env)
    try:
        wait_for_text(tmp_path / "run.out", "vessels spawned", run, 120.0)  # lotusim run started
        saved = _lotusim("checkpoint", "save", "first", env=env)
        assert saved.returncode == 0 and "checkpoint first saved: sim time" in saved.stdout, saved
        assert "1 vessels" in saved.stdout
        moved = _lotusim("move", "auv_1", "--enu", "300", "0", "-10", env=env)
        assert moved.returncode == 0, moved
        assert " 300.0" in _lotusim("list", env=env).stdout
        restored = _lotusim("checkpoint", "restore", "first", env=env)
        assert restored.returncode == 0 and "checkpoint first restored" in restored.stdout, restored
        listed = _lotusim("list", env=env).stdout
        x = float(next(line for line in listed.splitlines() if line.startswith("auv_1")).split()[3])
        assert abs(x) < 50.0, listed  # back near the origin, not at 300 m
        listing = _lotusim("checkpoint", "list", env=env)
        assert listing.returncode == 0 and listing.stdout.startswith("first: sim time"), listing
        for args, code, text in (
            (("save", "../evil"), 2, "expected a name"),
            (("restore", "nothing_here"), 1, "no checkpoint named 'nothing_here'"),
            (("restore",), 2, "give the checkpoint NAME"),
        ):
            refused = _lotusim("checkpoint", *args, env=env)
            lines = refused.stderr.strip().splitlines()
            assert refused.returncode == code and len(lines) == 1 and text in lines[0], refused
            assert lines[0].startswith("lotusim: ")
        assert not (tmp_path / "evil").exists() and sorted(os.listdir(tmp_path / "ck")) == ["first"]
        assert run.poll() is None, "the simulation still runs"
    finally:
        stop_run(run)


def test_sensors_continue_bit_for_bit_and_a_deleted_vessel_gets_its_sensor_state_back(ros_context, ck_dir):
    """With a sensor_publisher: the IMU messages after a restore are those that followed the save (noise counters,
    biases and schedules restored); a vessel deleted after the save gets its saved sensor state when the restored
    fleet brings it back."""
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import Imu

    from lotusim_sensors.sensor_publisher import SensorPublisher

    sim = Sim(ros_context, mode="lockstep", step_s=0.02)
    sensors = SensorPublisher(context=ros_context, parameter_overrides=[Parameter("seed", value=5)])
    sim.executor.add_node(sensors)
    try:
        imu: list[Imu] = []
        sim.client.create_subscription(Imu, "/tethys/imu/data", imu.append, 500)
        result = sim.command([create_item("tethys", "lrauv", (0, 0, -10)), create_item("boat", "wamv", (50, 0, 0))])
        assert result.succeeded == 2
        client = sim.client.create_client(Checkpoint, "/lotusim/sensors/checkpoint")
        spin_until(sim.executor, client.service_is_ready, 10.0, "sensor checkpoint service")
        spin_until(sim.executor, sim.mas.sensor_checkpoint.service_is_ready, 10.0, "MAS sees the sensors")
        gps = sensors._banks["gps"]
        for _ in range(30):
            sim.step(1)
            sim.spin_for(0.01)
        boat = sensors._slot_of["boat"]
        spin_until(sim.executor, lambda: gps.present[boat] and len(imu) >= 25, 10.0, "sensors configured")
        sim.spin_for(0.3)
        saved = _call(sim, SAVE, "with_sensors")
        assert saved.success and saved.message == "", saved.message
        boat_saved = (int(gps.counter[boat]), int(gps.next_due_ns[boat]), bool(gps.state["had_fix"][boat]))
        assert boat_saved[0] > 0
        count, t_saved = len(imu), sensors._t_ns
        sim.step(1)  # the boat's GPS one step after the save: what it must be one step after the restore
        spin_until(sim.executor, lambda: sensors._t_ns > t_saved, 10.0, "the step after the save")
        boat_next = (int(gps.counter[boat]), int(gps.next_due_ns[boat]), bool(gps.state["had_fix"][boat]))
        sim.step(39)
        spin_until(sim.executor, lambda: len(imu) >= count + 40, 10.0, "IMU after the save")
        reference = [(m.header.stamp.sec, m.header.stamp.nanosec, m.linear_acceleration.x, m.angular_velocity.z,
                      m.orientation.w) for m in imu[count : count + 40]]  # fmt: skip

        assert sim.command([delete_item("boat")]).succeeded == 1
        sim.step(20)
        sim.spin_for(0.3)
        restored = _call(sim, RESTORE, "with_sensors")
        assert restored.success and restored.message == "", restored.message
        count = len(imu)
        # brings "boat" back to the sensor node (its model from the worker's roster, latched by the restore): its
        # saved sensor state is applied and it samples that step as it did after the save
        sim.step(1)
        spin_until(sim.executor, lambda: "boat" in sensors._slot_of, 10.0, "boat back")
        boat = sensors._slot_of["boat"]
        spin_until(sim.executor, lambda: "boat" not in sensors._restored, 10.0, "boat's sensors restored")
        assert (int(gps.counter[boat]), int(gps.next_due_ns[boat]), bool(gps.state["had_fix"][boat])) == boat_next
        sim.step(39)
        spin_until(sim.executor, lambda: len(imu) >= count + 40, 10.0, "IMU after the restore")
        again = [(m.header.stamp.sec, m.header.stamp.nanosec, m.linear_acceleration.x, m.angular_velocity.z,
                  m.orientation.w) for m in imu[count : count + 40]]  # fmt: skip
        assert again == reference, "the IMU after the restore differs from the IMU after the save"
    finally:
        sim.executor.remove_node(sensors)
        sensors.destroy_node()
        sim.close()
