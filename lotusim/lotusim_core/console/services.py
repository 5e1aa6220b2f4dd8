"""The console's Foxglove services, answered on the Foxglove server's threads (ROS-free): `login` (a name and a
role, the token for an operator), `watch` (a vessel whose controllers' status the fleet updates carry) and
`command` (checked, then carried out one at a time by the command runner). Requests and answers are JSON objects;
an answer is {"ok", "message", ...}. Every command, accepted or refused, is one entry of the audit log. docs/console.md.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import Future

import foxglove

from lotusim_core.base.names import name_problem
from lotusim_core.console import commands as cmd
from lotusim_core.console.operators import AuditEntry, AuditLog, LoginError, Operators

COMMAND_WAIT_S = 60.0  # wall seconds a command may take (a spawn of a new model compiles nothing; 60 is ample)
SUMMARY_BYTES = 120  # of a payload that is not a command, kept in the audit log


def answer(ok: bool, message: str, **extra) -> bytes:
    """A service's answer: {"ok": ok, "message": message, **extra} as JSON."""
    return json.dumps({"ok": ok, "message": message, **extra}).encode()


def summary(payload: bytes) -> str:
    """The first SUMMARY_BYTES of a payload as text, "..." after when there is more."""
    text = bytes(payload[:SUMMARY_BYTES]).decode("utf-8", "replace")
    return text + ("..." if len(payload) > SUMMARY_BYTES else "")


class Services:
    """The answers of the console's services.

    submit: carries out a checked command, a Future of (ok, message) (CommandRunner.submit);
    watch: a vessel's name to watch (ControllerWatch.watch); sim_time_s: the sim time of the audit entries;
    on_entry: gets every new audit entry (the node publishes it on ROS and as a Foxglove log line).
    `paused`: the simulation as the last accepted pause or resume left it."""

    def __init__(
        self,
        operators: Operators,
        audit: AuditLog,
        submit: Callable[[cmd.Command], Future],
        watch: Callable[[str], None],
        sim_time_s: Callable[[], float],
        on_entry: Callable[[AuditEntry], None],
    ) -> None:
        self.operators, self.audit = operators, audit
        self.submit, self.watch_vessel, self.sim_time_s, self.on_entry = submit, watch, sim_time_s, on_entry
        self.paused = False

    def foxglove_services(self) -> list[foxglove.Service]:
        """The services for foxglove.start_server (JSON requests and answers)."""
        json_schema = foxglove.MessageSchema(encoding="json", schema=foxglove.Schema(name="", encoding="", data=b""))
        handlers = {"login": ("lotusim.Login", self.login), "watch": ("lotusim.Watch", self.watch),
                    "command": ("lotusim.Command", self.command)}  # fmt: skip
        return [
            foxglove.Service(
                name=name,
                schema=foxglove.ServiceSchema(name=schema, request=json_schema, response=json_schema),
                handler=lambda request, answer_of=method: answer_of(request.client_id, request.payload),
            )
            for name, (schema, method) in handlers.items()
        ]

    def login(self, client_id: int, payload: bytes) -> bytes:
        """{"name", "role", "token"}: the client is that operator or spectator from now on."""
        try:
            body = json.loads(payload)
            if not isinstance(body, dict):
                raise LoginError("login: expected a JSON object {name, role, token}")
            operator = self.operators.login(client_id, body.get("name"), body.get("role"), body.get("token"))
        except (LoginError, json.JSONDecodeError, UnicodeDecodeError) as exc:
            return answer(False, str(exc))
        return answer(True, f"logged in as {operator.role}", role=operator.role, name=operator.name)

    def watch(self, client_id: int, payload: bytes) -> bytes:
        """{"name": vessel}: its controllers' status in the fleet updates for a while (controller_watch)."""
        try:
            name = json.loads(payload).get("name")
        except (json.JSONDecodeError, UnicodeDecodeError, AttributeError):
            name = None
        problem = name_problem(name)
        if problem:
            return answer(False, f"watch: name: {problem}")
        self.watch_vessel(name)
        return answer(True, f"watching {name}")

    def command(self, client_id: int, payload: bytes) -> bytes:
        """A command (commands.parse_command) from an operator, carried out and answered with the simulation's
        answer; refused for bad input or a spectator. Audited either way."""
        who = self.operators.seen(client_id).name
        try:
            command = cmd.parse_command(payload)
        except cmd.CommandError as exc:
            return self._record(who, summary(payload), False, str(exc))
        try:
            operator = self.operators.commander(client_id)
        except LoginError as exc:
            return self._record(who, cmd.describe(command), False, str(exc))
        try:
            ok, message = self.submit(command).result(timeout=COMMAND_WAIT_S)
        except TimeoutError:
            ok, message = False, f"no answer within {COMMAND_WAIT_S:g} s (it may still be carried out)"
        except Exception as exc:  # noqa: BLE001 (the simulation's failure is the operator's answer)
            ok, message = False, f"{type(exc).__name__}: {exc}"
        if isinstance(command, cmd.Pause) and ok:
            self.paused = command.paused
        return self._record(operator.name, cmd.describe(command), ok, message)

    def _record(self, who: str, what: str, ok: bool, message: str) -> bytes:
        """The audit entry of a command, handed to on_entry; the answer to the operator."""
        self.on_entry(self.audit.add(who, what, ok, message, self.sim_time_s()))
        return answer(ok, message)
