"""FleetClient: the one client of the MAS server (lotusim_core.sim.mas_server) for lotusim's tools and users' scripts.

Like nav2's BasicNavigator: give it a node and the executor that spins it, wait for the server, then create,
move, delete and list vessels, list the catalogue's models, save or restore checkpoints. It speaks
- the FleetCommand action `/lotusim/fleet_command` (lotusim_interfaces/action/FleetCommand): goals are sent with
  reliable_calls, so a goal whose answer DDS lost is asked for again under the same goal id and still runs once;
- the services `/lotusim/list_vessels`, `/lotusim/list_models` (read-only: simply asked again) and
  `/lotusim/checkpoint` (saving or restoring the same checkpoint twice is harmless).
Every wait is in wall seconds and ends in a TimeoutError that names what did not answer.

    client = FleetClient(node, executor)
    client.wait_for_server(30.0)
    result = client.create([VesselDescription(name="auv", model="lrauv")])  # FleetCommand.Result
    for vessel in client.list_vessels():  # VesselInfo: pose in `map` (ENU, m), orientation map <- base_link FLU
        print(vessel.name, vessel.pose.position)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import NamedTuple

from rclpy.action import ActionClient

from lotusim_core.ros import reliable_calls
from lotusim_core.ros.spin import spin_until, wait_for
from lotusim_interfaces.action import FleetCommand
from lotusim_interfaces.msg import FleetCommandItem, VesselDescription
from lotusim_interfaces.srv import Checkpoint, ListModels, ListVessels

FLEET_COMMAND = "/lotusim/fleet_command"
LIST_VESSELS = "/lotusim/list_vessels"
LIST_MODELS = "/lotusim/list_models"
CHECKPOINT = "/lotusim/checkpoint"
SETTLE_S = 1.0  # wall seconds after server_is_ready() for the server to match our response readers (DDS race)
SERVICE_WAIT_S = 30.0  # wall seconds a service may take to appear
ANSWER_S = 5.0  # wall seconds the first attempt waits for an answer (the k-th waits k times this)
ATTEMPTS = 4

Feedback = Callable[[object], None]  # gets rclpy's FeedbackMessage: `.feedback` is a FleetCommand.Feedback


class ModelInfo(NamedTuple):
    """One catalogue model as /lotusim/list_models describes it."""

    name: str
    domain: str  # "underwater" or "surface"
    description: str


def fleet_items(command: int, vessels: Iterable[VesselDescription]) -> list[FleetCommandItem]:
    """FleetCommandItems of one kind (FleetCommandItem.CREATE, MOVE or DELETE), in the order given."""
    return [FleetCommandItem(command=command, vessel=v) for v in vessels]


class FleetClient:
    """A client of the MAS server on `node`, served by `executor` (which this client spins, never in a thread).

    hint: appended to every timeout message (e.g. "is `lotusim run` running, same ROS_DOMAIN_ID?").
    check: called before each spin; may raise (Ctrl-C, a supervised process that died)."""

    def __init__(self, node, executor, *, hint: str = "", check: Callable[[], None] | None = None) -> None:
        self.node, self.executor = node, executor
        self.hint, self.check = hint, check
        self._action: ActionClient | None = None  # made on first use: a listing needs no action endpoints
        self._services: dict[str, object] = {}

    @property
    def action(self) -> ActionClient:
        """The rclpy ActionClient of /lotusim/fleet_command (for what this class does not wrap, e.g. a cancel)."""
        if self._action is None:
            self._action = ActionClient(self.node, FleetCommand, FLEET_COMMAND)
        return self._action

    def spin_once(self, timeout_s: float) -> None:
        """Run `check`, then spin the executor for at most `timeout_s` wall seconds."""
        if self.check is not None:
            self.check()
        self.executor.spin_once(timeout_sec=timeout_s)

    def spin_for(self, seconds: float) -> None:
        """Spin for `seconds` of wall time."""
        wait_for(self.spin_once, lambda: False, seconds)

    def server_is_ready(self) -> bool:
        return self.action.server_is_ready()

    def wait_for_server(self, timeout_s: float = SERVICE_WAIT_S, *, what: str = "", settle_s: float = SETTLE_S) -> None:
        """Wait (wall seconds) until the FleetCommand server is seen, then `settle_s` more: a goal sent at once is
        likely to have its answer lost. TimeoutError: "<what> within <timeout_s> s", what defaulting to
        "the MAS server (/lotusim/fleet_command): no answer"."""
        what = what or f"the MAS server ({FLEET_COMMAND}): no answer"
        spin_until(self.executor, self.action.server_is_ready, timeout_s, what, hint=self.hint, check=self.check)
        self.spin_for(settle_s)

    def renew(self) -> None:
        """A fresh action client (new DDS endpoints): after a mas_server restart the old one may not re-match."""
        if self._action is not None:
            self._action.destroy()
        self._action = ActionClient(self.node, FleetCommand, FLEET_COMMAND)

    def command(
        self,
        items: Iterable[FleetCommandItem],
        *,
        timeout_s: float = 120.0,
        feedback: Feedback | None = None,
        answer_s: float = ANSWER_S,
        attempts: int = ATTEMPTS,
    ) -> FleetCommand.Result:
        """Send one FleetCommand goal (items of any kind, carried out in order) and return its result.

        The goal is re-sent under its id when its acceptance is lost (reliable_calls: it runs once);
        `timeout_s` (wall) bounds the wait for the result once accepted. Raises reliable_calls.GoalRejected,
        TimeoutError."""
        goal = FleetCommand.Goal(items=list(items))
        handle = reliable_calls.send_goal(
            self.action, goal, self.spin_once, feedback_callback=feedback, answer_s=answer_s, attempts=attempts
        )
        return reliable_calls.goal_result(handle, self.spin_once, timeout_s).result

    def create(self, vessels: Iterable[VesselDescription], **kwargs) -> FleetCommand.Result:
        """Create vessels (name empty: the server picks <model>_<k>); keyword arguments as `command`."""
        return self.command(fleet_items(FleetCommandItem.CREATE, vessels), **kwargs)

    def move(self, vessels: Iterable[VesselDescription], **kwargs) -> FleetCommand.Result:
        """Teleport vessels to the poses of their descriptions; keyword arguments as `command`."""
        return self.command(fleet_items(FleetCommandItem.MOVE, vessels), **kwargs)

    def delete(self, names: Iterable[str], **kwargs) -> FleetCommand.Result:
        """Delete vessels by name; keyword arguments as `command`."""
        return self.command(fleet_items(FleetCommandItem.DELETE, (VesselDescription(name=n) for n in names)), **kwargs)

    def list_vessels(
        self, worker: str = "", *, wait_s: float = SERVICE_WAIT_S, answer_s: float = ANSWER_S, attempts: int = ATTEMPTS
    ) -> list:
        """The registry's vessels (lotusim_interfaces/msg/VesselInfo), of one worker if `worker` is given.

        wait_s: for the service to appear; the k-th of `attempts` requests waits k * `answer_s` for its answer
        (wall seconds; attempts=1: one poll, e.g. of a run that may be recovering)."""
        request = ListVessels.Request(worker=worker)
        reply = self._read(ListVessels, LIST_VESSELS, request, wait_s, answer_s=answer_s, attempts=attempts)
        return list(reply.vessels)

    def list_models(self, *, wait_s: float = SERVICE_WAIT_S) -> list[ModelInfo]:
        """The catalogue's models, in the server's order."""
        reply = self._read(ListModels, LIST_MODELS, ListModels.Request(), wait_s)
        return [ModelInfo(*row) for row in zip(reply.models, reply.domains, reply.descriptions, strict=True)]

    def checkpoint(
        self,
        operation: int,
        name: str = "",
        *,
        wait_s: float = SERVICE_WAIT_S,
        answer_s: float = 60.0,
        attempts: int = 2,
    ):
        """Save, restore or list checkpoints (Checkpoint.Request.SAVE / RESTORE / LIST) by name; returns the
        Checkpoint.Response. Re-sent when its answer is lost (the same save or restore twice is harmless)."""
        request = Checkpoint.Request(operation=operation, path=name)
        return self._read(Checkpoint, CHECKPOINT, request, wait_s, answer_s=answer_s, attempts=attempts)

    def _read(
        self, srv_type, name: str, request, wait_s: float, *, answer_s: float = ANSWER_S, attempts: int = ATTEMPTS
    ):
        """Wait up to `wait_s` for service `name`, then call it, asking again when an answer is lost."""
        client = self._services.get(name)
        if client is None:
            client = self._services[name] = self.node.create_client(srv_type, name)
        spin_until(
            self.executor, client.service_is_ready, wait_s, f"{name}: no answer", hint=self.hint, check=self.check
        )
        return reliable_calls.call_read_only(client, request, self.spin_once, answer_s=answer_s, attempts=attempts)

    def destroy(self) -> None:
        """Destroy the action and service clients (not the node)."""
        if self._action is not None:
            self._action.destroy()
            self._action = None
        for client in self._services.values():
            self.node.destroy_client(client)
        self._services.clear()
