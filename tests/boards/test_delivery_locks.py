"""The lock rule of the hand-over (boards/services/delivery.py: `locked`).

A delivery locks the question or approval rows themselves, never the task or run it joins, and
skips rows another transaction holds. On PostgreSQL the tests hold a row in a second connection
and require the delivery to return at once, without the held row, and to hand it over once the
holder lets go; a claim holding the task row must not stop the answer from being delivered.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.db import connection, transaction

from boards import clock
from boards.models import Approval, Question, Task
from boards.services import delivery, inbox_decide, question_answer, task_claim
from tests.boards.helpers import ask, complete


def test_deliveries_lock_only_their_own_rows_and_skip_rows_others_hold(monkeypatch):
    monkeypatch.setattr(connection.features, "has_select_for_update_skip_locked", True)
    query = delivery.locked(Question.objects.select_related("task", "run")).query
    assert query.select_for_update
    assert query.select_for_update_skip_locked
    assert not query.select_for_update_nowait
    assert query.select_for_update_of == ("self",)


def test_where_the_database_cannot_skip_locked_rows_the_delivery_still_locks(monkeypatch):
    monkeypatch.setattr(connection.features, "has_select_for_update_skip_locked", False)
    query = delivery.locked(Approval.objects.all()).query
    assert query.select_for_update and not query.select_for_update_skip_locked


@contextmanager
def held(lock: Callable[[], Any]) -> Iterator[None]:
    """Run `lock` in another connection's open transaction until the block ends."""
    taken, done = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def hold() -> None:
        try:
            with transaction.atomic():
                lock()
                taken.set()
                done.wait(timeout=30)
        except BaseException as exc:
            errors.append(exc)
            taken.set()
        finally:
            connection.close()

    thread = threading.Thread(target=hold)
    thread.start()
    assert taken.wait(timeout=10) and not errors, errors
    try:
        yield
    finally:
        done.set()
        thread.join(timeout=30)


def deliver(fn: Callable[[], Any]) -> Any:
    """Deliver in a transaction that gives up after 2 s waiting on a lock (instead of hanging)."""
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL lock_timeout = '2s'")
        return fn()


def answered(make_task: Any, agent: Any, alice: Any) -> Question:
    claim = task_claim(task_id=make_task("Pick a database").pk, connection=agent)
    question = ask(claim, options=["Postgres", "SQLite"]).question
    question_answer(question=question, user=alice, answer="Postgres")
    return Question.objects.get(pk=question.pk)


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("on_postgres", "moved_clock")
def test_an_answer_another_transaction_holds_is_skipped_then_delivered_once(make_task, agent, alice):
    question = answered(make_task, agent, alice)
    with held(lambda: Question.objects.select_for_update().get(pk=question.pk)):
        assert deliver(lambda: delivery.deliver_answers(connection=agent, now=clock.db_now())) == []
    [got] = deliver(lambda: delivery.deliver_answers(connection=agent, now=clock.db_now()))
    assert got.pk == question.pk
    assert deliver(lambda: delivery.deliver_answers(connection=agent, now=clock.db_now())) == []


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("on_postgres", "moved_clock")
def test_a_transaction_holding_the_task_does_not_stop_its_answer_being_delivered(make_task, agent, alice):
    question = answered(make_task, agent, alice)
    with held(lambda: Task.objects.select_for_update().get(pk=question.task_id)):
        [got] = deliver(lambda: delivery.deliver_answers(connection=agent, now=clock.db_now()))
    assert got.pk == question.pk


def approved(make_task: Any, agent: Any, alice: Any) -> Approval:
    claim = task_claim(task_id=make_task("Ship it", review_required=True).pk, connection=agent)
    item = complete(claim, outcome="done", next_step="deploy to staging").inbox_item
    approval = inbox_decide(item=item, user=alice, decision="accept").approval
    assert approval is not None
    return approval


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("on_postgres", "moved_clock")
def test_an_approval_another_transaction_holds_is_skipped_then_handed_over(make_task, agent, alice):
    approval = approved(make_task, agent, alice)
    with held(lambda: Approval.objects.select_for_update().get(pk=approval.pk)):
        valid, new = deliver(lambda: delivery.deliver_approvals(connection=agent, now=clock.db_now()))
        assert (valid, new) == ([], [])
    valid, new = deliver(lambda: delivery.deliver_approvals(connection=agent, now=clock.db_now()))
    assert [a.pk for a in valid] == [a.pk for a in new] == [approval.pk]


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("on_postgres", "moved_clock")
def test_a_transaction_holding_the_task_does_not_stop_its_approval_being_handed_over(make_task, agent, alice):
    approval = approved(make_task, agent, alice)
    with held(lambda: Task.objects.select_for_update().get(pk=approval.task_id)):
        _, new = deliver(lambda: delivery.deliver_approvals(connection=agent, now=clock.db_now()))
    assert [a.pk for a in new] == [approval.pk]
