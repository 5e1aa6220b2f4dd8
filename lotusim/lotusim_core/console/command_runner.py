"""The operators' commands carried out through the simulation's own interfaces, one at a time, on a thread of
their own with a node and an executor of its own (the FleetClient spins them while it waits), so that the console's
updates go on meanwhile: spawn, move and delete through the FleetCommand action, a route through
`/<vessel>/waypoints/set`, pause/resume and the real-time factor through the clock master's parameters `paused`
and `real_time_factor`.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from concurrent.futures import Future

import rclpy
from rcl_interfaces.msg import Parameter as ParameterMsg
from rcl_interfaces.msg import ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters
from rclpy.executors import SingleThreadedExecutor

from lotusim_core.console import commands as cmd
from lotusim_core.ros.fleet_client import FleetClient
from lotusim_core.ros.spin import spin_until
from lotusim_interfaces.msg import VesselDescription
from lotusim_interfaces.srv import SetWaypoints


class CommandRunner:
    """Runs the operators' commands one at a time on its own thread, with a node and executor of its own (the
    FleetClient spins them while it waits), so that the console's updates go on meanwhile."""

    def __init__(self, context, master_node: str) -> None:
        self.node = rclpy.create_node("console_commands", context=context)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        self.fleet = FleetClient(self.node, self.executor)
        self.params = self.node.create_client(SetParameters, f"/{master_node.lstrip('/')}/set_parameters")
        self.waypoint_clients: dict[str, object] = {}
        self.jobs: queue.Queue = queue.Queue()
        self.thread = threading.Thread(target=self._run, name="console-commands", daemon=True)
        self.thread.start()
        self.jobs.put((self._match_the_server, Future()))  # a first command then finds the action matched

    def _match_the_server(self) -> None:
        with contextlib.suppress(TimeoutError):
            self.fleet.wait_for_server(60.0)

    def submit(self, command: cmd.Command) -> Future:
        """Carry out `command`; the future's result is (ok, message)."""
        future: Future = Future()
        self.jobs.put((lambda: self.execute(command), future))
        return future

    def list_models(self) -> Future:
        """The catalogue's models (FleetClient.list_models); the future's result is a list of dicts."""
        future: Future = Future()
        self.jobs.put((lambda: [m._asdict() for m in self.fleet.list_models(wait_s=2.0)], future))
        return future

    def close(self) -> None:
        self.jobs.put(None)
        self.thread.join(timeout=5.0)
        self.executor.shutdown()
        self.node.destroy_node()

    def _run(self) -> None:
        while (job := self.jobs.get()) is not None:
            work, future = job
            try:
                future.set_result(work())
            except Exception as exc:  # noqa: BLE001 (a command's failure is the operator's answer, never fatal)
                future.set_exception(exc)

    def execute(self, command: cmd.Command) -> tuple[bool, str]:
        """(ok, message) of one command, as the simulation answered it."""
        if isinstance(command, (cmd.Spawn, cmd.Move, cmd.Delete)):
            return self._fleet(command)
        if isinstance(command, cmd.Waypoints):
            return self._waypoints(command)
        if isinstance(command, cmd.Pause):
            return self._set_parameter("paused", ParameterValue(type=ParameterType.PARAMETER_BOOL,
                                                                bool_value=command.paused))  # fmt: skip
        value = ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=command.value)
        return self._set_parameter("real_time_factor", value)

    def _fleet(self, command) -> tuple[bool, str]:
        if not self.fleet.server_is_ready():
            self.fleet.wait_for_server(10.0, what="the MAS server (/lotusim/fleet_command) is not running")
        if isinstance(command, cmd.Delete):
            result = self.fleet.delete([command.name], timeout_s=30.0)
        else:
            at = command.at
            vessel = VesselDescription(
                name=command.name,
                model=getattr(command, "model", ""),
                pose_frame=VesselDescription.POSE_GEODETIC,
                latitude_deg=at.latitude_deg,
                longitude_deg=at.longitude_deg,
                depth_m=at.depth_m,
                heading_deg=at.heading_deg,
            )
            call = self.fleet.create if isinstance(command, cmd.Spawn) else self.fleet.move
            result = call([vessel], timeout_s=30.0)
        item = result.results[0]
        return bool(item.ok), item.reason or ("done" if item.ok else "refused")

    def _waypoints(self, command: cmd.Waypoints) -> tuple[bool, str]:
        service = f"/{command.name}/waypoints/set"
        client = self.waypoint_clients.get(service)
        if client is None:
            client = self.waypoint_clients[service] = self.node.create_client(SetWaypoints, service)
        if not client.wait_for_service(timeout_sec=3.0):
            return False, f"{command.name} has no waypoint follower ({service} is not served)"
        request = SetWaypoints.Request(
            latitude_deg=[p[0] for p in command.points],
            longitude_deg=[p[1] for p in command.points],
            acceptance_radius_m=command.radius_m,
            speed_mps=command.speed_mps,
            loop=command.loop,
        )
        future = client.call_async(request)
        spin_until(self.executor, future.done, 10.0, f"{service} did not answer")
        reply = future.result()
        return bool(reply.success), reply.message or "route set"

    def _set_parameter(self, name: str, value: ParameterValue) -> tuple[bool, str]:
        if not self.params.wait_for_service(timeout_sec=3.0):
            return False, f"the clock master ({self.params.srv_name}) is not running"
        future = self.params.call_async(SetParameters.Request(parameters=[ParameterMsg(name=name, value=value)]))
        spin_until(self.executor, future.done, 10.0, f"{self.params.srv_name} did not answer")
        result = future.result().results[0]
        return bool(result.successful), result.reason or "done"
