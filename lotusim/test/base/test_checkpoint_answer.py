"""checkpoint_store.answered: a checkpoint request's answer (a worker's, the sensor node's) never raises."""

from __future__ import annotations

from lotusim_core.base.checkpoint_store import CheckpointError, answered


def test_success_gives_the_digest_and_no_message() -> None:
    assert answered(lambda: "abc123") == (True, "abc123", "")


def test_a_refusal_gives_its_file_key_reason_and_any_other_error_its_type() -> None:
    def refused() -> str:
        raise CheckpointError("cp/checkpoint.json", "parts", "nothing saved for worker 'w'")

    def broken() -> str:
        raise RuntimeError("disk on fire")

    assert answered(refused) == (False, "", "cp/checkpoint.json: parts: nothing saved for worker 'w'")
    assert answered(broken) == (False, "", "RuntimeError: disk on fire")
