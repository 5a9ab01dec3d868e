"""Lease rules at their edge: a heartbeat never shortens a question hold, a late answer revives
nothing, and the epoch term of the fence refuses on its own. Time is moved, never slept."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
import time_machine
from django.db.models import F
from django.utils import timezone

from boards.models import Column, InboxItem, ProgressNote, Question, Report, Run, Task
from boards.results import ClaimResult
from boards.services import lease_sweep, question_answer, task_claim, work_for_connection
from tests.boards.helpers import ask, beat, complete, refused, release
from weft.models import Event

pytestmark = pytest.mark.usefixtures("moved_clock")


def _expiry(claim: ClaimResult) -> Any:
    return Run.objects.get(pk=claim.run.pk).lease_expires_at


def test_it_keeps_the_question_hold_through_a_heartbeat(agent, task):
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        asked_at = timezone.now()
        claim = task_claim(task_id=task.pk, connection=agent)
        ask(claim)
        assert _expiry(claim) == asked_at + timedelta(minutes=60)
        traveller.shift(timedelta(minutes=1))
        result = beat(claim)
        assert result.run.lease_expires_at == asked_at + timedelta(minutes=60)
        assert _expiry(claim) == asked_at + timedelta(minutes=60)
        # Still held where a 20-minute renewal would have run out (at +21).
        traveller.shift(timedelta(minutes=58, seconds=59))
        assert lease_sweep() == 0
        assert [r.run_id for r in work_for_connection(connection=agent).held] == [claim.run.run_id]
        beat(claim)


def test_it_does_not_revive_a_hold_that_ran_out_when_the_answer_comes_late(agent, agent2, alice, task):
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        claim = task_claim(task_id=task.pk, connection=agent)
        asked = ask(claim, "Postgres or SQLite?", ["Postgres", "SQLite"])
        traveller.shift(timedelta(minutes=61))
        # No sweep has run: the hold is over at read time all the same.
        question_answer(question=asked.question, user=alice, answer="Postgres")
        run = Run.objects.get(pk=claim.run.pk)
        assert run.state != "active" and run.lease_expires_at <= timezone.now()
        # The asker's next get_my_work holds nothing and hands the answer over, once.
        work = work_for_connection(connection=agent)
        assert work.held == []
        assert [(q.pk, q.answer) for q in work.answers] == [(asked.question.pk, "Postgres")]
        assert work_for_connection(connection=agent).answers == []
        refused("lease_lost", beat, claim)
        assert lease_sweep() == 1
        run.refresh_from_db()
        assert run.state == "released" and run.lease_token_hash == ""
        task.refresh_from_db()
        assert task.column == Column.TODO and task.assignee_connection_id is None
        assert task.epoch == claim.run.epoch + 1
        # The task is claimable by anyone.
        other = task_claim(task_id=task.pk, connection=agent2)
        assert other.run.pk != claim.run.pk and other.run.epoch == task.epoch + 1


def _snapshot() -> tuple[object, ...]:
    return (
        list(Run.objects.order_by("pk").values()),
        list(Task.objects.order_by("pk").values()),
        ProgressNote.objects.count(),
        Question.objects.count(),
        Report.objects.count(),
        InboxItem.objects.count(),
        Event.objects.count(),
    )


GUARDED: dict[str, Callable[[ClaimResult], Any]] = {
    "report_progress": beat,
    "request_input": ask,
    "complete_task": complete,
    "release_task": release,
}


@pytest.mark.parametrize("call", sorted(GUARDED))
def test_it_refuses_a_live_run_once_the_task_epoch_moved_alone(call: str, agent, task):
    claim = task_claim(task_id=task.pk, connection=agent)
    # Only the epoch moves: the run stays live, its token and lease untouched.
    Task.objects.filter(pk=task.pk).update(epoch=F("epoch") + 1)
    run = Run.objects.get(pk=claim.run.pk)
    assert run.state == "active" and run.lease_expires_at > timezone.now()
    before = _snapshot()
    error = refused("lease_lost", GUARDED[call], claim)
    assert error.details["epoch"] == claim.run.epoch + 1
    assert _snapshot() == before
