"""Writes two people or two agents can race, under real threads on PostgreSQL.

Each test releases its threads at once with a barrier and then checks what the database kept:
one winner, the rest refused with the documented code, one event, nothing lost or duplicated.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
import time_machine
from django.utils import timezone

from accounts.models import Usage
from accounts.services import usage_consume
from boards import clock
from boards.models import Approval, Column, InboxItem, Question, Run, Task
from boards.results import ClaimResult, InboxResult, WorkResult
from boards.services import (
    inbox_decide,
    lease_sweep,
    question_answer,
    run_heartbeat,
    task_claim,
    task_create,
    work_for_connection,
)
from tests.boards.helpers import ask, codes, complete, race
from weft.errors import WeftError
from weft.models import Event

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("on_postgres", "moved_clock")]
ROUNDS = 8


def events(type: str, entity_id: object) -> int:
    return Event.objects.filter(type=type, entity_id=str(entity_id)).count()


def review_item(make_task: Any, agent: Any, title: str, next_step: str = "deploy to staging") -> InboxItem:
    task = make_task(title, review_required=True)
    claim = task_claim(task_id=task.pk, connection=agent)
    item = complete(claim, outcome="done", next_step=next_step).inbox_item
    assert item is not None
    return item


def answered_question(make_task: Any, agent: Any, alice: Any, title: str) -> Question:
    task = make_task(title)
    claim = task_claim(task_id=task.pk, connection=agent)
    question = ask(claim, options=["Postgres", "SQLite"]).question
    question_answer(question=question, user=alice, answer="Postgres")
    return Question.objects.get(pk=question.pk)


def approval_for(make_task: Any, agent: Any, alice: Any, title: str) -> Approval:
    item = review_item(make_task, agent, title)
    approval = inbox_decide(item=item, user=alice, decision="accept").approval
    assert approval is not None
    return approval


def test_8_people_deciding_one_review_give_one_decision(pro, alice, bob, agent, make_task):
    for round_no in range(ROUNDS):
        item = review_item(make_task, agent, f"Review {round_no}")
        deciders = [
            (alice if n % 2 else bob, "accept" if n % 2 else "rework", InboxItem.objects.get(pk=item.pk))
            for n in range(8)
        ]
        outcomes = race(deciders, lambda d: inbox_decide(item=d[2], user=d[0], decision=d[1], note="again"))
        assert codes(outcomes) == {"InboxResult": 1, "already_decided": 7}, outcomes
        [won] = [o for o in outcomes if isinstance(o, InboxResult)]
        item.refresh_from_db()
        assert item.state == "decided" and item.decision == won.item.decision
        assert events("inbox.item_decided", item.pk) == 1
        accepted = item.decision == "accept"
        assert Approval.objects.filter(inbox_item=item).count() == (1 if accepted else 0)
        assert Task.objects.get(pk=item.task_id).column == (Column.DONE if accepted else Column.TODO)


def test_8_people_answering_one_question_store_one_answer(pro, alice, bob, agent, make_task):
    for round_no in range(ROUNDS):
        task = make_task(f"Question {round_no}")
        question = ask(task_claim(task_id=task.pk, connection=agent)).question
        people = [(alice if n % 2 else bob, n, Question.objects.get(pk=question.pk)) for n in range(8)]
        outcomes = race(people, lambda p: question_answer(question=p[2], user=p[0], answer=f"answer {p[1]}"))
        assert codes(outcomes) == {"InboxResult": 1, "already_decided": 7}, outcomes
        [won] = [o for o in outcomes if isinstance(o, InboxResult)]
        question.refresh_from_db()
        assert won.question is not None
        assert question.state == "answered" and question.answer == won.question.answer
        assert events("question.answered", question.pk) == 1
        item = InboxItem.objects.get(question=question)
        assert item.state == "decided" and item.decision == "answered"


def test_answering_and_dropping_one_question_at_once_keep_one_of_them(pro, alice, bob, agent, make_task):
    for round_no in range(ROUNDS):
        task = make_task(f"Question {round_no}")
        question = ask(task_claim(task_id=task.pk, connection=agent)).question
        item = InboxItem.objects.get(question=question)

        def act(n: int, question_pk: int = question.pk, item_pk: int = item.pk) -> InboxResult:
            if n % 2:
                return question_answer(
                    question=Question.objects.get(pk=question_pk), user=alice, answer="yes"
                )
            return inbox_decide(item=InboxItem.objects.get(pk=item_pk), user=bob, decision="drop")

        outcomes = race(range(8), act)
        assert codes(outcomes) == {"InboxResult": 1, "already_decided": 7}, outcomes
        question.refresh_from_db()
        item.refresh_from_db()
        answered = events("question.answered", question.pk)
        dropped = events("inbox.item_decided", item.pk)
        assert answered + dropped == 1
        if answered:
            assert (question.state, item.decision) == ("answered", "answered")
        else:
            assert (question.state, item.decision) == ("cancelled", "drop")


def _delivered(outcome: object) -> tuple[set[int], set[int]]:
    """(question ids, approval ids) one get_my_work or start_task response handed over."""
    if isinstance(outcome, WorkResult):
        return {q.pk for q in outcome.answers}, {a.pk for a in outcome.approvals}
    if isinstance(outcome, ClaimResult):
        return {a["id"] for a in outcome.context["answers"]}, set()
    raise AssertionError(outcome)


def test_8_get_my_work_calls_deliver_an_answer_and_an_approval_once(pro, alice, agent, make_task):
    for round_no in range(ROUNDS):
        question = answered_question(make_task, agent, alice, f"Asked {round_no}")
        approval = approval_for(make_task, agent, alice, f"Approved {round_no}")
        outcomes = race(range(8), lambda _: work_for_connection(connection=agent))
        assert codes(outcomes) == {"WorkResult": 8}, outcomes
        delivered = [_delivered(o) for o in outcomes]
        assert sum(question.pk in answers for answers, _ in delivered) == 1
        assert sum(approval.pk in approvals for _, approvals in delivered) == 1
        assert events("question.delivered", question.pk) == 1
        assert events("approval.delivered", approval.pk) == 1


def test_start_task_and_get_my_work_racing_deliver_an_answer_once(pro, alice, agent, make_task):
    for round_no in range(ROUNDS):
        question = answered_question(make_task, agent, alice, f"Asked {round_no}")

        def call(n: int, task_id: int = question.task_id) -> object:
            if n % 2:
                return task_claim(task_id=task_id, connection=agent)
            return work_for_connection(connection=agent)

        outcomes = race(range(8), call)
        assert codes(outcomes) == {"WorkResult": 4, "ClaimResult": 4}, outcomes
        assert sum(question.pk in _delivered(o)[0] for o in outcomes) == 1
        assert events("question.delivered", question.pk) == 1


def test_start_task_and_get_my_work_racing_deliver_an_approval_once(pro, alice, agent, make_task):
    for round_no in range(ROUNDS):
        approval = approval_for(make_task, agent, alice, f"Approved {round_no}")

        def call(n: int, task_id: int = approval.task_id) -> object:
            if n % 2:
                return task_claim(task_id=task_id, connection=agent)
            return work_for_connection(connection=agent)

        outcomes = race(range(8), call)
        # The same connection starting its task again gets its run back, even mid-race.
        assert codes(outcomes) == {"WorkResult": 4, "ClaimResult": 4}, outcomes
        claims = [o for o in outcomes if isinstance(o, ClaimResult)]
        assert sum(not c.resumed for c in claims) == 1
        assert {c.context["approvedStep"]["id"] for c in claims} == {approval.pk}
        assert Run.objects.filter(task_id=approval.task_id, state="active").count() == 1
        assert sum(approval.pk in _delivered(o)[1] for o in outcomes) <= 1
        assert events("approval.delivered", approval.pk) == 1


def test_a_heartbeat_and_a_sweep_at_expiry_never_both_win(pro, agent, make_task):
    start = timezone.now()
    outcomes_seen: list[str] = []
    for round_no in range(ROUNDS * 2):
        with time_machine.travel(start + timedelta(hours=round_no), tick=False) as traveller:
            task = make_task(f"Leased {round_no}")
            claim = task_claim(task_id=task.pk, connection=agent)
            expiry = claim.run.lease_expires_at
            # The heartbeat's clock reads just before expiry; the sweep's just at it.
            traveller.move_to(expiry - timedelta(milliseconds=1))

            def act(n: int, claim: ClaimResult = claim, expiry: Any = expiry) -> object:
                if n == 0:
                    return run_heartbeat(
                        workspace=pro, run_id=claim.run.run_id, lease_token=claim.lease_token, note="alive"
                    )
                return lease_sweep(now=expiry)

            outcomes = race(range(2), act)
        beat = next(o for o in outcomes if not isinstance(o, int))
        swept = next(o for o in outcomes if isinstance(o, int))
        run = Run.objects.get(pk=claim.run.pk)
        task.refresh_from_db()
        stale_events = events("run.stale", claim.run.run_id)
        if isinstance(beat, WeftError):
            assert beat.code == "lease_lost"
            assert (swept, stale_events, run.state) == (1, 1, "stale")
            assert run.lease_expires_at == expiry and run.lease_token_hash == ""
            assert task.column == Column.TODO and task.epoch == 2
            outcomes_seen.append("sweep")
        else:
            assert (swept, stale_events, run.state) == (0, 0, "active"), beat
            assert run.lease_expires_at > expiry
            assert task.column == Column.DOING and task.epoch == 1
            outcomes_seen.append("heartbeat")
        # Out of the way of the next round's sweep.
        Run.objects.filter(pk=run.pk).update(state="completed")
    assert set(outcomes_seen) <= {"sweep", "heartbeat"}


def test_4_sweeps_at_once_mark_each_run_stale_once(pro, agent, agent2, make_task):
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        runs = [
            task_claim(task_id=make_task(f"Leased {n}").pk, connection=agent if n % 2 else agent2).run
            for n in range(20)
        ]
    later = start + timedelta(minutes=21)
    outcomes = race(range(4), lambda _: lease_sweep(now=later))
    assert all(isinstance(o, int) for o in outcomes), outcomes
    assert sum(outcomes) == 20
    for run in runs:
        assert events("run.stale", run.run_id) == 1
    assert Run.objects.filter(state="stale").count() == 20
    assert set(Task.objects.values_list("column", "epoch")) == {(Column.TODO, 2)}


def _used(ws: Any) -> int:
    return Usage.objects.get(workspace=ws, kind=Usage.TASKS).count


def test_8_creators_at_45_of_50_tasks_create_exactly_5(ws_a, alice):
    usage_consume(workspace=ws_a, kind=Usage.TASKS, n=45, now=clock.db_now())
    outcomes = race(range(8), lambda n: task_create(workspace=ws_a, title=f"Task {n}", by_user=alice))
    assert codes(outcomes) == {"TaskResult": 5, "plan_limit_reached": 3}, outcomes
    assert _used(ws_a) == 50
    assert Task.objects.filter(workspace=ws_a).count() == 5
    assert Event.objects.filter(type="task.created").count() == 5


def test_a_task_create_that_fails_gives_its_count_back(ws_a, alice, monkeypatch):
    from boards.services import board

    usage_consume(workspace=ws_a, kind=Usage.TASKS, n=45, now=clock.db_now())
    real_emit = board.emit

    def failing_emit(**kwargs: Any) -> object:
        # Fails after the usage increment and the task insert, inside the same transaction.
        if kwargs["payload"].get("title", "").startswith("boom"):
            raise RuntimeError("the event log is down")
        return real_emit(**kwargs)

    monkeypatch.setattr(board, "emit", failing_emit)
    titles = ["boom 1", "boom 2", *(f"Task {n}" for n in range(6))]
    outcomes = race(titles, lambda title: task_create(workspace=ws_a, title=title, by_user=alice))
    # A failing create holds a slot only until it rolls back: five ordinary creates always fit,
    # and each failing one ends either refused at the cap or failed with nothing kept.
    found = codes(outcomes)
    assert found["TaskResult"] == 5, outcomes
    assert found["plan_limit_reached"] + found["RuntimeError"] == 3, outcomes
    assert _used(ws_a) == 50
    assert Task.objects.filter(workspace=ws_a).count() == 5
    assert not Task.objects.filter(title__startswith="boom").exists()
