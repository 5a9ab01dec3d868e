"""The one-statement completion under real threads on PostgreSQL: one run completes once.

(The one-statement claim is raced by test_claim_races and test_holder_races: an agent's claim on
PostgreSQL is that statement first.)"""

from __future__ import annotations

from typing import Any

import pytest

from accounts.models import AgentConnection
from boards.models import Column, Report, Run, Task
from boards.services import task_claim, task_create
from tests.boards.helpers import codes, complete, race, release
from weft.models import Event

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("on_postgres")]
ROUNDS = 10


def _claimed(pro: Any, alice: Any, agent: AgentConnection, n: int) -> Any:
    task = task_create(workspace=pro, title=f"Raced {n}", by_user=alice).task
    return task_claim(task_id=task.pk, connection=agent)


def test_8_threads_completing_one_run_complete_it_once(pro, alice, agent):
    for n in range(ROUNDS):
        claim = _claimed(pro, alice, agent, n)

        def done(_: object, c: Any = claim, k: int = n) -> Any:
            return complete(c, outcome=f"done {k}")

        outcomes = race(range(8), done)
        assert codes(outcomes) == {"CompleteResult": 1, "lease_lost": 7}, outcomes
        assert Report.objects.filter(run=claim.run).count() == 1
        assert Event.objects.filter(entity_id=str(claim.run.run_id), type="run.completed").count() == 1
        assert Task.objects.get(pk=claim.task.pk).column == Column.DONE


def test_a_completion_and_a_release_at_once_keep_exactly_one_of_them(pro, alice, agent):
    seen: set[str] = set()
    for n in range(ROUNDS):
        claim = _claimed(pro, alice, agent, n)

        def act(what: str, c: Any = claim) -> Any:
            return complete(c) if what == "complete" else release(c)

        outcomes = race(["complete", "release"], act)
        won = codes(outcomes)
        assert won["lease_lost"] == 1 and won["CompleteResult"] + won["RunResult"] == 1, outcomes
        run, task = Run.objects.get(pk=claim.run.pk), Task.objects.get(pk=claim.task.pk)
        if won["CompleteResult"]:
            assert (run.state, task.column, task.epoch) == ("completed", Column.DONE, 1)
            assert Report.objects.filter(run=run).count() == 1
        else:
            assert (run.state, task.column, task.epoch) == ("released", Column.TODO, 2)
            assert not Report.objects.filter(run=run).exists()
        seen.add(run.state)
        Task.objects.filter(pk=task.pk).update(column=Column.DONE)
    print("winners seen:", sorted(seen))
