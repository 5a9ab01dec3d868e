"""Exactly one event per change (none on rollback); pinned query counts on the hot paths."""

from typing import Any

import pytest
from django.db import connection, transaction

from boards.models import InboxItem
from boards.services import (
    inbox_decide,
    lease_sweep,
    question_answer,
    run_heartbeat,
    task_claim,
    task_move,
    task_restore,
    task_trash,
    task_update,
    work_for_connection,
)
from tests.boards.helpers import ask, beat, complete, refused, release
from weft import events
from weft.models import Event


def new_events(since):
    events.relay()  # on_commit does not fire inside the test's transaction
    return list(Event.objects.filter(position__gt=since).order_by("position").values_list("type", flat=True))


def last_seq():
    events.relay()
    positions = Event.objects.filter(position__isnull=False).order_by("-position")
    return positions.values_list("position", flat=True).first() or 0


def test_every_change_writes_exactly_one_event(agent, alice, ws_a, make_task):
    def expect(types, fn, *args, **kwargs):
        since = last_seq()
        result = fn(*args, **kwargs)
        assert new_events(since) == types
        return result

    task = expect(["task.created"], make_task, "Write docs")
    expect(["task.updated"], task_update, task=task, by_user=alice, title="Write the docs")
    expect([], task_update, task=task, by_user=alice, title="Write the docs")  # no change, no event
    claim = expect(["run.started"], task_claim, task_id=task.pk, connection=agent)
    expect(["run.heartbeat"], beat, claim)
    claim = expect(["run.resumed"], task_claim, task_id=task.pk, connection=agent)
    asked = expect(["run.input_requested", "inbox.item_created"], ask, claim)
    expect(["question.answered"], question_answer, question=asked.question, user=alice, answer="yes")
    expect(["question.delivered"], work_for_connection, connection=agent)
    expect([], work_for_connection, connection=agent)
    expect(["run.released"], release, claim)
    other = make_task("Review me", review_required=True)
    done = expect(
        ["run.completed", "inbox.item_created"], complete, task_claim(task_id=other.pk, connection=agent)
    )
    expect(["inbox.item_decided"], inbox_decide, item=done.inbox_item, user=alice, decision="later")
    done_item = InboxItem.objects.get(kind="review")
    expect(["inbox.item_decided"], inbox_decide, item=done_item, user=alice, decision="rework", note="more")
    expect(["task.moved"], task_move, task=task, column="backlog", by_user=alice)
    expect(["task.trashed"], task_trash, task=task, by_user=alice)
    expect(["task.restored"], task_restore, task=task, by_user=alice)
    held = task_claim(task_id=other.pk, connection=agent)
    expect(["run.released", "task.moved"], task_move, task=held.task, column="done", by_user=alice)
    positions = list(Event.objects.filter(workspace=ws_a).order_by("id").values_list("position", flat=True))
    first = positions[0] or 0
    assert positions == list(range(first, first + len(positions)))


def test_a_refused_or_rolled_back_change_writes_no_event(agent, agent2, ws_a, task):
    claim = task_claim(task_id=task.pk, connection=agent)
    since = last_seq()
    refused("already_claimed", task_claim, task_id=task.pk, connection=agent2)
    refused("lease_lost", beat, type(claim)(**{**claim.__dict__, "lease_token": "stolen"}))
    assert new_events(since) == []
    with pytest.raises(RuntimeError), transaction.atomic():
        beat(claim)
        raise RuntimeError("the caller fails after the write")
    assert new_events(since) == []
    assert beat(claim)
    assert new_events(since) == ["run.heartbeat"]
    assert Event.objects.get(type="run.heartbeat").position == since + 1


@pytest.mark.django_db(transaction=True)
def test_fanout_runs_after_commit_only(agent, task):
    seen: list[Any] = []
    events.register_fanout(seen.append)
    try:
        with pytest.raises(RuntimeError), transaction.atomic():
            task_claim(task_id=task.pk, connection=agent)
            assert seen == []
            raise RuntimeError("roll back")
        assert seen == []
        task_claim(task_id=task.pk, connection=agent)
        assert [e.type for e in seen] == ["run.started"]
    finally:
        events.unregister_fanout(seen.append)


@pytest.mark.django_db(transaction=True)
def test_emit_outside_a_transaction_is_refused(ws_a):
    with pytest.raises(RuntimeError):
        events.emit(workspace_id=ws_a.pk, type="x", entity_type="y", entity_id=1, payload={})


def test_the_sweep_emits_one_event_per_expired_run(agent, make_task, moved_clock):
    import time_machine
    from django.utils import timezone

    with time_machine.travel(timezone.now(), tick=False) as traveller:
        for n in range(3):
            task_claim(task_id=make_task(f"t{n}").pk, connection=agent)
        traveller.shift(__import__("datetime").timedelta(minutes=21))
        since = last_seq()
        assert lease_sweep() == 3
        assert new_events(since) == ["run.stale"] * 3


# Pinned query counts. On PostgreSQL each operation also reads the database clock once.
def clock_reads():
    return 1 if connection.vendor == "postgresql" else 0


def one_statement_claim():
    """On PostgreSQL an agent's claim is first tried as one statement (boards/services/fast.py)."""
    return connection.vendor == "postgresql"


def test_task_claim_query_count(agent, task, django_assert_num_queries):
    # A first claim: savepoint, task, live run, approval, attention, claim update, run insert,
    # answers, event insert, release savepoint (no earlier run to read). On PostgreSQL: savepoint
    # (the test's transaction is the caller's), the one statement, release savepoint.
    with django_assert_num_queries(3 if one_statement_claim() else 10):
        task_claim(task_id=task.pk, connection=agent)


def test_task_reclaim_query_count(agent, agent2, task, django_assert_num_queries):
    release(task_claim(task_id=task.pk, connection=agent))
    # A claim after an earlier run: the first claim's queries plus that run, its last progress
    # notes and its rework notes.
    with django_assert_num_queries((3 if one_statement_claim() else 10) + 3):
        task_claim(task_id=task.pk, connection=agent2)


def test_task_claim_resume_query_count(agent, task, django_assert_num_queries):
    task_claim(task_id=task.pk, connection=agent)
    # savepoint, task, live run, token rotation, answers, event insert, release savepoint; on
    # PostgreSQL also the clock read and, first, the one-statement claim that finds the task held
    # (in a savepoint of its own).
    with django_assert_num_queries(7 + clock_reads() + 3 * one_statement_claim()):
        task_claim(task_id=task.pk, connection=agent)


def test_run_heartbeat_query_count(agent, ws_a, task, django_assert_num_queries):
    claim = task_claim(task_id=task.pk, connection=agent)
    # savepoint, run, fenced update, progress insert, event insert, release savepoint
    with django_assert_num_queries(6 + clock_reads()):
        run_heartbeat(workspace=ws_a, run_id=claim.run.run_id, lease_token=claim.lease_token, note="n")


def test_work_for_connection_query_count(agent, task, make_task, django_assert_num_queries):
    task_claim(task_id=task.pk, connection=agent)
    for n in range(5):
        make_task(f"more {n}")
    # savepoint, held, waiting, answers, approvals, due, attention, best, issue news,
    # approved-step news, release savepoint
    with django_assert_num_queries(11 + clock_reads()):
        work_for_connection(connection=agent)
