"""Helpers for end-to-end tests of the simulation nodes over real DDS: start the dynamics worker(s) and the MAS
server in-process (the same classes `lotusim run` and the launch files start), and talk to them the way a
user's script does (action and service clients, topic publishers and subscribers)."""

from __future__ import annotations

from collections.abc import Callable

import rclpy
from rclpy.parameter import Parameter

from lotusim_core.ros import spin
from lotusim_core.ros.fleet_client import FleetClient
from lotusim_core.ros.node_runner import make_executor
from lotusim_core.sim.mas_server import MasServer
from lotusim_interfaces.msg import FleetCommandItem, VesselDescription
from lotusim_interfaces.srv import Step
from lotusim_physics.dynamics_node import DynamicsWorker


def spin_until(executor, predicate: Callable[[], bool], timeout_s: float = 10.0, what: str = "condition") -> None:
    """lotusim_core.ros.spin.spin_until for a noun `what` ("step reply"): TimeoutError "timed out waiting for
    <what> within <timeout_s> s"; spins in 10 ms steps (lockstep tests poll time-based conditions)."""
    spin.spin_until(executor, predicate, timeout_s, f"timed out waiting for {what}", step_s=0.01)


def lose_first_answer(client) -> list:
    """Make the rclpy service client `client` lose the answer to its next request, as rmw does when the answer
    comes before discovery has matched the client (the request still reaches the server); returns the list of
    requests the client sends from now on."""
    from rclpy.task import Future

    send, sent = client.call_async, []

    def call_async(request):
        sent.append(request)
        future = send(request)
        if len(sent) == 1:
            client.remove_pending_request(future)  # its answer is dropped on arrival
            return Future()
        return future

    client.call_async = call_async
    return sent


def create_item(name: str, model: str, xyz=(0.0, 0.0, 0.0), overrides: str = "") -> FleetCommandItem:
    vessel = VesselDescription(name=name, model=model, pose_frame=VesselDescription.POSE_ENU, overrides_yaml=overrides)
    # floats: rosidl serialises a Python int in a float64 field as garbage (NaN) over the wire
    vessel.pose.position.x, vessel.pose.position.y, vessel.pose.position.z = (float(v) for v in xyz)
    return FleetCommandItem(command=FleetCommandItem.CREATE, vessel=vessel)


def delete_item(name: str) -> FleetCommandItem:
    return FleetCommandItem(command=FleetCommandItem.DELETE, vessel=VesselDescription(name=name))


class Sim:
    """A dynamics worker + MAS server + a client node on one executor."""

    def __init__(
        self,
        context,
        mode: str = "lockstep",
        step_s: float = 0.02,
        workers: int = 1,
        mas_params: dict | None = None,
        worker_args: list[str] | None = None,
        **params,
    ) -> None:
        """worker_args: the workers' command-line ROS arguments (`--ros-args -r __ns:=/ns ...`), as a launch
        `namespace=` or `remappings=` gives them."""
        self.context = context
        # the nodes' executor (EventsExecutor where rclpy has it): the default executors rebuild a wait set of every
        # subscription at each spin, which costs milliseconds with hundreds of vessels (docs/performance.md)
        self.executor = make_executor(context=context)
        self.workers = []
        for k in range(workers):
            overrides = [
                Parameter("mode", value=mode),
                Parameter("step_s", value=step_s),
                Parameter("clock_master", value=k == 0),
            ]
            overrides += [Parameter(key, value=value) for key, value in params.items()]
            worker = DynamicsWorker(
                context=context,
                worker=f"worker_{k}",
                node_name=f"dynamics_{k}",
                parameter_overrides=overrides,
                cli_args=worker_args,
            )
            self.workers.append(worker)
            self.executor.add_node(worker)
        self.mas = MasServer(
            context=context,
            parameter_overrides=[Parameter(key, value=value) for key, value in (mas_params or {}).items()],
        )
        self.client = rclpy.create_node("test_user", context=context)
        for node in (self.mas, self.client):
            self.executor.add_node(node)
        self.fleet = FleetClient(self.client, self.executor)
        self.step_client = self.client.create_client(Step, "/lotusim/step")
        spin_until(
            self.executor, lambda: len(self.mas.registry.workers) == workers, 30.0, "workers found by mas_server"
        )

    @property
    def worker(self) -> DynamicsWorker:
        return self.workers[0]

    @property
    def fleet_command(self):
        """The FleetClient's rclpy ActionClient (for goals it does not wrap: a cancel)."""
        return self.fleet.action

    def command(self, items, feedback: list | None = None, timeout_s: float = 30.0):
        """One FleetCommand goal through the FleetClient; `feedback` collects its FeedbackMessages."""
        if not self.fleet.server_is_ready():
            self.wait_for_fleet_command()
        cb = feedback.append if feedback is not None else None
        return self.fleet.command(items, timeout_s=timeout_s, feedback=cb)

    def listing(self, answer_s: float = 10.0) -> dict:
        """name -> VesselInfo, as /lotusim/list_vessels answers: the service awaited 10 s, then one request whose
        answer is awaited `answer_s` wall seconds (FleetClient.list_vessels)."""
        return {v.name: v for v in self.fleet.list_vessels(wait_s=10.0, answer_s=answer_s, attempts=1)}

    def spin_once(self, timeout_s: float) -> None:
        self.executor.spin_once(timeout_sec=timeout_s)

    def spin_until(self, predicate: Callable[[], bool], timeout_s: float, what: str) -> None:
        """spin_until on this Sim's executor: the `spin_until(predicate, timeout_s, what)` that RunClock and
        other lotusim_core waits take."""
        spin_until(self.executor, predicate, timeout_s, what)

    def wait_for_fleet_command(self, attempts: int = 3, attempt_s: float = 15.0) -> None:
        """Wait until the FleetCommand client has matched the server; renew the client between attempts.

        Seen in CI (1 test in ~500): the client never reported the server ready, although the MAS server was up.
        Its graph showed the servers of earlier tests, whose participants were still alive (the cause, cured in
        conftest.ros_context). A fresh client (new DDS endpoints) remains the guard against a lost match; the
        final error lists what the graph shows.
        """
        for attempt in range(attempts):
            try:
                # the client can see the server before the server has matched the client's response readers (a
                # known DDS service race): give discovery a moment, or the acceptance can be lost
                self.fleet.wait_for_server(attempt_s, what="timed out waiting for fleet_command server", settle_s=0.5)
            except TimeoutError:
                if attempt == attempts - 1:
                    services = [name for name, _ in self.client.get_service_names_and_types() if "lotusim" in name]
                    raise TimeoutError(
                        f"fleet_command action server not ready after {attempts} clients x {attempt_s} s; "
                        f"nodes {self.client.get_node_names()}, lotusim services {services}"
                    ) from None
                self.renew_action_client()
                continue
            return

    def renew_action_client(self) -> None:
        """A fresh FleetCommand client (after a mas_server restart the old client may not re-match in time)."""
        self.fleet.renew()

    def step(self, steps: int):
        spin_until(self.executor, self.step_client.service_is_ready, 30.0, "/lotusim/step")
        future = self.step_client.call_async(Step.Request(steps=steps))
        spin_until(self.executor, future.done, 30.0, "step reply")
        return future.result()

    def spin_for(self, seconds: float) -> None:
        """Spin for `seconds` of wall time (5 ms steps)."""
        spin.wait_for(self.spin_once, lambda: False, seconds, step_s=0.005)

    def close(self) -> None:
        self.executor.shutdown()
        for node in [self.client, self.mas, *self.workers]:
            node.destroy_node()
