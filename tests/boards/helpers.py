"""Short calls for the claim-loop tests."""

from __future__ import annotations

from typing import Any

import pytest

from boards.results import ClaimResult
from boards.services import (
    run_complete,
    run_heartbeat,
    run_release,
    run_request_input,
)
from weft.errors import WeftError


def beat(claim: ClaimResult, note: str = "working") -> Any:
    return run_heartbeat(
        workspace=claim.task.workspace, run_id=claim.run.run_id, lease_token=claim.lease_token, note=note
    )


def ask(claim: ClaimResult, question: str = "Which database?", options: list[str] | None = None) -> Any:
    return run_request_input(
        workspace=claim.task.workspace,
        run_id=claim.run.run_id,
        lease_token=claim.lease_token,
        question=question,
        options=options,
    )


def complete(claim: ClaimResult, **kwargs: Any) -> Any:
    kwargs.setdefault("outcome", "done")
    return run_complete(
        workspace=claim.task.workspace, run_id=claim.run.run_id, lease_token=claim.lease_token, **kwargs
    )


def release(claim: ClaimResult, reason: str = "blocked") -> Any:
    return run_release(
        workspace=claim.task.workspace, run_id=claim.run.run_id, lease_token=claim.lease_token, reason=reason
    )


def refused(code: str, fn: Any, *args: Any, **kwargs: Any) -> WeftError:
    with pytest.raises(WeftError) as exc:
        fn(*args, **kwargs)
    assert exc.value.code == code, exc.value
    return exc.value
