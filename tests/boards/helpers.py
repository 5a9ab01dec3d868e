"""Short calls for the claim-loop tests."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from django.db import close_old_connections, connection

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


def race(workers: Sequence[Any], fn: Callable[[Any], Any]) -> list[Any]:
    """Run fn(worker) in one thread per worker, all released at once by a barrier.

    Each thread closes its own database connection; a raised exception is returned as the
    outcome, so a test can count winners and refusals.
    """
    barrier = threading.Barrier(len(workers))
    outcomes: list[Any] = []
    lock = threading.Lock()

    def run(worker: Any) -> None:
        try:
            barrier.wait()
            result = fn(worker)
        except BaseException as exc:
            result = exc
        finally:
            connection.close()
        with lock:
            outcomes.append(result)

    threads = [threading.Thread(target=run, args=(w,)) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    close_old_connections()
    return outcomes


def codes(outcomes: list[Any]) -> Counter[str]:
    """Outcomes by WeftError code, or by type name for results and other exceptions."""
    return Counter(o.code if isinstance(o, WeftError) else type(o).__name__ for o in outcomes)
