"""One holder racing itself, under real threads on PostgreSQL: repeated start_task calls of one
connection give one run and one lease token, and a resume racing the lease's expiry never leaves a
live run with a dead token or two live runs."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from typing import Any

import pytest

from boards import clock, lease
from boards.models import Column, Run, Task
from boards.results import ClaimResult
from boards.services import lease_sweep, task_claim, task_create
from boards.services.common import token_hash
from tests.boards.helpers import beat, codes, race
from weft.models import Event

pytestmark = pytest.mark.django_db(transaction=True)
ROUNDS = 10


@pytest.mark.parametrize("threads", [2, 3])
def test_it_gives_one_holder_one_run_and_one_token_from_concurrent_start_task(
    on_postgres, pro, alice, agent, threads: int
):
    for round_no in range(ROUNDS):
        task = task_create(workspace=pro, title=f"Started twice {round_no}", by_user=alice).task

        def start(_: int, t: Task = task) -> Any:
            return task_claim(task_id=t.pk, connection=agent)

        outcomes = race(list(range(threads)), start)
        assert codes(outcomes) == {"ClaimResult": threads}, outcomes
        claims: list[ClaimResult] = outcomes
        assert Run.objects.filter(task=task).count() == 1
        task.refresh_from_db()
        assert task.epoch == 1 and task.column == Column.DOING
        assert len({c.run.run_id for c in claims}) == 1
        assert len({c.lease_token for c in claims}) == 1, "each start_task answered another token"
        assert sum(not c.resumed for c in claims) == 1
        assert Event.objects.filter(type="run.started", entity_id=str(claims[0].run.run_id)).count() == 1
        beat(claims[0])
        # Keep the attention meter and later rounds independent of this one.
        Task.objects.filter(pk=task.pk).update(column=Column.DONE)


# Where the lease ends relative to the moment both threads start, in milliseconds.
EXPIRY_OFFSETS_MS = [-2, 0, 1, 2, 3, 5, 8, 12, 20, 50, 100] * 2


def _check_round(task: Task, first: ClaimResult, got: Any, seen: Counter[str]) -> str | None:
    """What is wrong after one holder-versus-sweep round, or None."""
    if not isinstance(got, ClaimResult):
        return f"the holder got {got!r}, neither its run back nor a new claim"
    live = list(Run.objects.filter(task=task, state__in=lease.LIVE_STATES))
    if len(live) != 1:
        return f"{len(live)} live runs"
    (run,) = live
    if run.pk != got.run.pk or run.lease_token_hash != token_hash(got.lease_token):
        return "the live run is not the one given, or its token is not the one given"
    if run.lease_expires_at <= clock.db_now():
        return "the run given back holds a dead lease"
    task.refresh_from_db()
    if got.resumed:
        if run.pk != first.run.pk or task.epoch != first.run.epoch:
            return "a resume moved the run or the epoch"
        seen["resumed"] += 1
    else:
        old = Run.objects.get(pk=first.run.pk)
        if old.state != "stale" or old.lease_token_hash or task.epoch != first.run.epoch + 2:
            return f"a reclaim left the old run {old.state} at epoch {task.epoch}"
        seen["reclaimed"] += 1
    beat(got)
    return None


def test_it_resumes_or_reclaims_but_never_leaves_a_dead_token_when_the_lease_expires_at_the_restart(
    on_postgres, pro, alice, agent
):
    seen: Counter[str] = Counter()
    problems: list[str] = []
    for round_no, offset in enumerate(EXPIRY_OFFSETS_MS):
        task = task_create(workspace=pro, title=f"Expiring {round_no}", by_user=alice).task
        first = task_claim(task_id=task.pk, connection=agent)
        Run.objects.filter(pk=first.run.pk).update(
            lease_expires_at=clock.db_now() + timedelta(milliseconds=offset)
        )

        def act(role: str, t: Task = task) -> Any:
            if role == "sweep":
                return lease_sweep()
            return task_claim(task_id=t.pk, connection=agent)

        outcomes = race(["holder", "sweep"], act)
        (got,) = [o for o in outcomes if not isinstance(o, int)]
        problem = _check_round(task, first, got, seen)
        if problem:
            problems.append(f"lease ending {offset} ms after the start: {problem}")
        Task.objects.filter(pk=task.pk).update(column=Column.DONE)
    assert problems == [], f"{seen}; " + "\n".join(problems)
