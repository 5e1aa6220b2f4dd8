"""The MAS server's side of /lotusim/checkpoint: one checkpoint of every worker, by name (docs/simulation.md).

- SAVE: the old commit of that name is removed, every worker saves its part (lotusim_physics.checkpoint), and
  only if every worker did so at the same sim instant is the commit (checkpoint.json) written.
- RESTORE: the commit is read and must name exactly the running workers; every worker first CHECKs its part
  (reads and validates it completely, changing nothing); only if all of them pass do they RESTORE, and the
  registry is rebuilt from their listings. A refused checkpoint changes no worker and no listing.
- LIST: the checkpoints in the directory, complete or not.
The sensor_publisher, when it runs, saves and restores its part too (/lotusim/sensors/checkpoint,
lotusim_sensors.checkpoint): it is checked with the workers and restored after them.
The MAS server and the workers must see one checkpoint directory (same machine or a shared file system).
"""

from __future__ import annotations

from lotusim_core.base import checkpoint_store as store
from lotusim_interfaces.srv import Checkpoint, ListVessels

CHECKPOINT_ANSWER_S = 20.0  # wall seconds a worker has to save or restore before it is asked again


async def handle(mas, request: Checkpoint.Request, response: Checkpoint.Response) -> Checkpoint.Response:
    """Answer one request to the MAS server `mas` (a lotusim_core.sim.mas_server.MasServer)."""
    root = store.checkpoint_dir(mas.checkpoint_dir)
    try:
        if request.operation == Checkpoint.Request.LIST:
            _list(root, response)
        elif request.operation == Checkpoint.Request.SAVE:
            await _save(mas, root, store.check_name(request.path), response)
        elif request.operation == Checkpoint.Request.RESTORE:
            await _restore(mas, root, store.check_name(request.path), response)
        elif request.operation == Checkpoint.Request.CHECK:
            await _check_all(mas, root, store.check_name(request.path), response)
        else:
            raise store.CheckpointError("request", "operation", f"unknown operation {request.operation}")
        response.success = True
    except store.CheckpointError as exc:
        response.success, response.message = False, str(exc)
    except OSError as exc:
        response.success, response.message = False, f"{root}: {exc.strerror or exc}"
    except Exception as exc:  # noqa: BLE001 - no request may take the MAS server down
        mas.get_logger().error(f"checkpoint request {request.operation} {request.path!r}: {exc!r}")
        response.success, response.message = False, f"checkpoint: internal error: {type(exc).__name__}: {exc}"
    return response


def _list(root, response: Checkpoint.Response) -> None:
    lines = []
    for name, info in store.list_checkpoints(root):
        if isinstance(info, str):
            lines.append(f"{name}: cannot be restored: {info}")
            continue
        response.names.append(name)
        vessels = sum(p["vessels"] for p in info["parts"].values())
        workers = ", ".join(sorted(info["parts"]))
        lines.append(f"{name}: sim time {info['sim_time_ns'] * 1e-9:.3f} s, {vessels} vessels ({workers})")
    response.message = "\n".join(lines)


async def _ask_each(mas, operation: int, name: str, workers: list[str]) -> dict:
    """Each worker's answer to (operation, name), asked one after the other; a missing answer is an error."""
    replies = {}
    for worker in workers:
        reply = await mas.calls.ask_worker(
            worker, "checkpoint", Checkpoint.Request(operation=operation, path=name), CHECKPOINT_ANSWER_S, 3
        )
        if reply is None:
            raise store.CheckpointError(f"worker {worker}", "checkpoint", "no answer")
        if not reply.success:
            raise store.CheckpointError(f"worker {worker}", "checkpoint", reply.message)
        replies[worker] = reply
    return replies


def _workers(mas) -> list[str]:
    workers = sorted(mas.registry.workers)
    if not workers:
        raise store.CheckpointError("mas_server", "workers", "no worker found")
    return workers


async def _save(mas, root, name: str, response: Checkpoint.Response) -> None:
    store.location(root, name, create=True)
    store.uncommit(root, name)
    replies = await _ask_each(mas, Checkpoint.Request.SAVE, name, _workers(mas))
    times = {w: r.sim_time.sec * 1_000_000_000 + r.sim_time.nanosec for w, r in replies.items()}
    if len(set(times.values())) != 1:
        shown = ", ".join(f"{w} {t * 1e-9:.3f} s" for w, t in sorted(times.items()))
        raise store.CheckpointError(
            root / name,
            "sim_time",
            f"the workers saved at different sim times ({shown}): not committed; save in lockstep mode",
        )
    parts = {w: {"sha256": r.digest, "vessels": r.vessel_count} for w, r in replies.items()}
    sensors = await _ask_sensors(mas, Checkpoint.Request.SAVE, name)
    if sensors is None:
        response.message = "saved without the sensors' state: no sensor_publisher answers"
    else:
        sensors = {"sha256": sensors.digest, "t_ns": sensors.sim_time.sec * 1_000_000_000 + sensors.sim_time.nanosec}
    store.commit(root, name, next(iter(times.values())), parts, sensors)
    _answer_totals(response, replies)


async def _check_all(mas, root, name: str, response: Checkpoint.Response) -> tuple[list[str], bool]:
    """Check that the checkpoint is complete, names exactly the running workers, and that each worker (and the
    sensor node, if it runs and the checkpoint has its state) accepts its part (CHECK: validated, nothing
    changed); returns the workers and whether the sensors are to be restored."""
    commit = store.read_commit(root, name)
    parts = commit["parts"]
    workers = _workers(mas)
    if sorted(parts) != workers:
        raise store.CheckpointError(
            root / name / store.COMMIT_FILE,
            "parts",
            f"saved with workers {sorted(parts)}, running workers are {workers}: start the same workers to restore",
        )
    replies = await _ask_each(mas, Checkpoint.Request.CHECK, name, workers)
    with_sensors = commit["sensors"] is not None and mas.sensor_checkpoint.service_is_ready()
    if with_sensors and await _ask_sensors(mas, Checkpoint.Request.CHECK, name) is None:
        raise store.CheckpointError("sensor_publisher", "checkpoint", "no answer")
    response.vessel_count = sum(p["vessels"] for p in parts.values())
    response.sim_time = next(iter(replies.values())).sim_time
    if commit["sensors"] is not None and not with_sensors:
        response.message = "the sensors' state is not restored: no sensor_publisher"
    return workers, with_sensors


async def _restore(mas, root, name: str, response: Checkpoint.Response) -> None:
    """CHECK everywhere, then RESTORE every worker (all of them, even after one failed: which can only happen if
    its files changed since its CHECK) and the sensors, then rebuild the registry from the workers' listings."""
    workers, with_sensors = await _check_all(mas, root, name, response)
    replies, failed = {}, []
    for worker in workers:
        try:
            replies.update(await _ask_each(mas, Checkpoint.Request.RESTORE, name, [worker]))
        except store.CheckpointError as exc:
            failed.append(str(exc))
    if with_sensors and await _ask_sensors(mas, Checkpoint.Request.RESTORE, name) is None:
        response.message = "the sensors' state is not restored: the sensor_publisher did not answer"
    mas.registry.clear_vessels()
    for worker in workers:
        reply = await mas.calls.ask_worker(worker, "list", ListVessels.Request(), mas.list_timeout_s, 3)
        if reply is None:
            failed.append(f"worker {worker}: list_vessels: restored, but its vessels are not listed")
            continue
        for info in reply.vessels:
            mas.registry.adopt(info.name, info.model, info.domain, worker)
    if failed:
        raise store.CheckpointError(root / name, "restore", f"only partly restored: {'; '.join(failed)}")
    _answer_totals(response, replies)


async def _ask_sensors(mas, operation: int, name: str) -> Checkpoint.Response | None:
    """The sensor node's answer (None if it does not run or answer); a refusal raises CheckpointError."""
    client = mas.sensor_checkpoint
    if not client.service_is_ready():
        return None
    # a lost answer is asked for again (saving or restoring twice is harmless)
    reply = await mas.calls.ask_again(
        client, Checkpoint.Request(operation=operation, path=name), CHECKPOINT_ANSWER_S, 3
    )
    if reply is not None and not reply.success:
        raise store.CheckpointError("sensor_publisher", "checkpoint", reply.message)
    return reply


def _answer_totals(response: Checkpoint.Response, replies: dict) -> None:
    response.vessel_count = sum(r.vessel_count for r in replies.values())
    response.sim_time = next(iter(replies.values())).sim_time
