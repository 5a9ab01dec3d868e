"""Fencing with old tokens, and lease timing with time moved (never slept)."""

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from boards.models import Column, InboxItem, ProgressNote, Question, Report, Run, Task
from boards.services import lease_sweep, question_answer, task_claim, work_for_connection
from tests.boards.helpers import ask, beat, complete, refused, release
from weft.models import Event

pytestmark = pytest.mark.usefixtures("moved_clock")


def snapshot():
    return (
        list(Run.objects.order_by("pk").values()),
        list(Task.objects.order_by("pk").values()),
        ProgressNote.objects.count(),
        Question.objects.count(),
        Report.objects.count(),
        InboxItem.objects.count(),
        Event.objects.count(),
    )


def assert_all_four_lost(old):
    before = snapshot()
    for call in (beat, ask, complete, release):
        error = refused("lease_lost", call, old)
        assert error.fix.marker == "Fix"
    assert snapshot() == before


def test_old_token_after_a_sweep_is_lease_lost_everywhere(agent, agent2, task):
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        old = task_claim(task_id=task.pk, connection=agent)
        traveller.shift(timedelta(minutes=20))
        assert lease_sweep() == 1
        assert_all_four_lost(old)
        task_claim(task_id=task.pk, connection=agent2)
        assert_all_four_lost(old)


def test_old_token_after_release_and_reclaim_is_lease_lost_everywhere(agent, task):
    old = task_claim(task_id=task.pk, connection=agent)
    release(old)
    assert_all_four_lost(old)
    new = task_claim(task_id=task.pk, connection=agent)
    assert new.run.epoch == old.run.epoch + 2
    assert_all_four_lost(old)
    beat(new)


def test_an_expired_lease_is_lost_even_before_any_sweep(agent, task):
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        claim = task_claim(task_id=task.pk, connection=agent)
        traveller.shift(timedelta(minutes=20))
        assert_all_four_lost(claim)


def test_a_wrong_token_or_run_id_is_lease_lost(agent, task):
    claim = task_claim(task_id=task.pk, connection=agent)
    claim.lease_token = "not-the-token"
    refused("lease_lost", beat, claim)
    claim.run.run_id = "not-a-uuid"
    refused("lease_lost", beat, claim)


def test_a_heartbeat_at_19_minutes_keeps_the_run(agent, task):
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        claim = task_claim(task_id=task.pk, connection=agent)
        traveller.shift(timedelta(minutes=19))
        result = beat(claim)
        assert result.run.lease_expires_at == timezone.now() + timedelta(minutes=20)
        traveller.shift(timedelta(minutes=19))
        assert lease_sweep() == 0
        beat(claim)
        assert Run.objects.get().state == "active"


def test_twenty_minutes_without_a_heartbeat_makes_it_stale(agent, agent2, task):
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        claim = task_claim(task_id=task.pk, connection=agent)
        traveller.shift(timedelta(minutes=19, seconds=59))
        assert lease_sweep() == 0
        traveller.shift(timedelta(seconds=1))
        # Expired at read time, before any sweep: not held, and claimable by anyone.
        assert work_for_connection(connection=agent).held == []
        assert lease_sweep() == 1
        run = Run.objects.get()
        assert run.state == "stale" and run.lease_token_hash == ""
        task.refresh_from_db()
        assert task.column == Column.TODO
        assert task.assignee_connection_id is None and task.assignee_user_id is None
        assert task.epoch == claim.run.epoch + 1
        assert Event.objects.filter(type="run.stale").count() == 1
        assert lease_sweep() == 0
        task_claim(task_id=task.pk, connection=agent2)


def test_a_claim_expires_a_stale_run_itself_when_no_sweep_ran(agent, agent2, task):
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        task_claim(task_id=task.pk, connection=agent)
        traveller.shift(timedelta(minutes=20))
        second = task_claim(task_id=task.pk, connection=agent2)
        assert second.run.epoch == 3
        assert list(Run.objects.order_by("pk").values_list("state", flat=True)) == ["stale", "active"]


def test_an_open_question_holds_60_minutes_then_releases_and_the_answer_arrives_once(agent, alice, task):
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        claim = task_claim(task_id=task.pk, connection=agent)
        asked = ask(claim, "Postgres or SQLite?", ["Postgres", "SQLite"])
        traveller.shift(timedelta(minutes=59))
        assert lease_sweep() == 0
        assert [r.run_id for r in work_for_connection(connection=agent).held] == [claim.run.run_id]
        traveller.shift(timedelta(minutes=1))
        assert work_for_connection(connection=agent).held == []
        assert lease_sweep() == 1
        run = Run.objects.get()
        assert run.state == "released"
        question = Question.objects.get()
        assert question.state == "open"
        assert InboxItem.objects.get(question=question).state == "open"
        task.refresh_from_db()
        assert task.column == Column.TODO and task.assignee_connection_id is None

        question_answer(question=asked.question, user=alice, answer="Postgres")
        first = work_for_connection(connection=agent)
        assert [(q.pk, q.answer) for q in first.answers] == [(question.pk, "Postgres")]
        assert first.hint.call is not None and first.hint.call.args == {"id": task.pk}
        assert work_for_connection(connection=agent).answers == []
        # Not repeated by start_task either.
        assert task_claim(task_id=task.pk, connection=agent).context["answers"] == []


def test_an_answer_while_the_claim_holds_comes_with_start_task_once(agent, alice, task):
    claim = task_claim(task_id=task.pk, connection=agent)
    asked = ask(claim)
    question_answer(question=asked.question, user=alice, answer="SQLite")
    assert Run.objects.get().state == "active"
    resumed = task_claim(task_id=task.pk, connection=agent)
    assert [a["answer"] for a in resumed.context["answers"]] == ["SQLite"]
    assert work_for_connection(connection=agent).answers == []
    assert task_claim(task_id=task.pk, connection=agent).context["answers"] == []
