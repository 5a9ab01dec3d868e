"""The one-statement claim and completion agree with the pure rules, on generated states.

The pure modules are the specification: `lease` (what is held, the lease a claim starts, what a
completion leaves), `attention` with the pure waiting model (`attention_model`), the review rule
(`runs.needs_review`). Hypothesis builds a state in PostgreSQL (the task's column and epoch, a run
on it in any state with any expiry and holder, Inbox items open, snoozed or decided, seats, an
approval, an answer to hand over; for a completion the token, the epoch, an approved step, checks,
review and evidence not accepted), runs the statement, and checks that it took the common path
exactly when the rules say it may, and that it wrote what the rules compute; when it may not, it
changed nothing. Every example is rolled back.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import time_machine
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import event as label
from hypothesis import strategies as st

from accounts.models import AgentConnection, Seat, User, Workspace
from boards import attention, lease
from boards.models import Approval, Board, Column, InboxItem, InboxKind, Question, Report, Run, RunState, Task
from boards.services import fast
from boards.services.common import CLAIMABLE_COLUMNS, lease_token_for, token_hash
from boards.services.runs import needs_review
from tests.boards import attention_model
from weft.models import Event

pytestmark = pytest.mark.usefixtures("on_postgres", "moved_clock")

NOW = datetime(2026, 6, 1, 9, 30, 0, 250000, tzinfo=UTC)
EXAMPLES = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
minutes = st.integers(-30, 30).map(lambda m: timedelta(minutes=m))  # 0: expiring right now


@dataclass(frozen=True)
class World:
    ws: Workspace
    board: Board
    me: AgentConnection
    other: AgentConnection
    people: list[User]


@pytest.fixture
def world(ws_a, agent, agent2, bob, carol) -> World:
    return World(ws_a, Board.objects.create(workspace=ws_a, name="B"), agent, agent2, [bob, carol])


def _rolled_back(check: Any) -> None:
    with time_machine.travel(NOW, tick=False), transaction.atomic():
        check()
        transaction.set_rollback(True)


def _task(w: World, **fields: Any) -> Task:
    return Task.objects.create(workspace=w.ws, board=w.board, title="t", **fields)


def _run(w: World, task: Task, *, state: str, expires: timedelta, mine: bool = True, epoch: int = 0) -> Run:
    return Run.objects.create(
        workspace=w.ws,
        task=task,
        connection=w.me if mine else w.other,
        lease_token_hash="not a token",
        epoch=epoch,
        state=state,
        started_at=NOW - timedelta(hours=1),
        last_heartbeat_at=NOW - timedelta(hours=1),
        lease_expires_at=NOW + expires,
    )


def _item(w: World, run: Run, *, state: str, snooze: timedelta | None = None, estimate: int = 5) -> InboxItem:
    return InboxItem.objects.create(
        workspace=w.ws,
        kind=InboxKind.REVIEW,
        task=run.task,
        run=run,
        state=state,
        snoozed_until=NOW + snooze if snooze is not None else None,
        estimated_minutes=estimate,
        created_at=NOW - timedelta(hours=2),
    )


def _seats(w: World, people: int) -> None:
    """The workspace's seats: its owner's, plus people - 1 more."""
    for user in w.people[: people - 1]:
        Seat.objects.get_or_create(workspace=w.ws, user=user)
    for user in w.people[people - 1 :]:
        Seat.objects.filter(workspace=w.ws, user=user).delete()


often = st.sampled_from([True, True, True, False])
rarely = often.map(lambda b: not b)
items = st.lists(  # small estimates and snoozes ending right now: the limits' edges are reached
    st.tuples(
        st.sampled_from(["open", "open", "snoozed", "decided"]),
        st.sampled_from([-10, 0, 0, 10]).map(lambda m: timedelta(minutes=m)),
        st.sampled_from([0, 1, 2, 4, 9, 20, 45]),
    ),
    max_size=11,
)


@given(
    column=st.sampled_from([*Column, Column.TODO, Column.TODO, Column.BACKLOG]),
    epoch=st.integers(0, 3),
    run=st.none() | st.none() | st.tuples(st.sampled_from(list(RunState)), minutes, st.booleans()),
    waiting=items,
    people=st.integers(1, 3),
    approval=st.sampled_from(["none", "none", "none", "valid", "expired", "used", "another's"]),
    answer=st.sampled_from(["none", "none", "none", "pending", "delivered", "another task's"]),
)
@EXAMPLES
def test_the_claim_statement_claims_exactly_when_the_rules_admit_it(
    world, column, epoch, run, waiting, people, approval, answer
):
    def check() -> None:
        w = world
        _seats(w, people)
        task = _task(w, column=column, epoch=epoch)
        elsewhere = _run(w, _task(w, column=Column.DONE), state=RunState.COMPLETED, expires=timedelta(0))
        for state, snooze, estimate in waiting:
            _item(w, elsewhere, state=state, snooze=snooze, estimate=estimate)
        if run is not None:
            _run(w, task, state=run[0], expires=run[1], mine=run[2], epoch=epoch)
        _approval(w, task, elsewhere, approval)
        _answer(w, task if answer != "another task's" else elsewhere.task, elsewhere, answer)
        before = (Run.objects.count(), Event.objects.count())

        claimed = fast.claim(workspace_id=w.ws.pk, task_id=task.pk, connection_id=w.me.pk)

        assessed = attention_model.assess_items(
            [
                attention_model.WaitingItem(NOW - timedelta(hours=2), estimate, state, NOW + snooze)
                for state, snooze, estimate in waiting
            ],
            people=people,
            now=NOW,
        )
        may = (
            column in CLAIMABLE_COLUMNS
            and (run is None or run[0] not in lease.LIVE_STATES)  # any live run: resume, expiry or refusal
            and approval != "valid"
            and answer != "pending"
            and attention.admits(assessed, approved_step=False)
        )
        label("claim statement: " + ("claimed" if may else "stepped aside"))
        assert (claimed is not None) == may
        task.refresh_from_db()
        if claimed is None:
            assert (task.column, task.epoch) == (column, epoch)
            assert (Run.objects.count(), Event.objects.count()) == before
            return
        expected = lease.claim(epoch, NOW)
        row, new_run = claimed
        stored = Run.objects.get(pk=new_run.pk)
        assert (task.column, task.epoch, task.assignee_connection_id) == (
            Column.DOING,
            expected.epoch,
            w.me.pk,
        )
        assert lease.Lease(stored.state, stored.epoch, stored.lease_expires_at) == expected
        assert stored.lease_token_hash == token_hash(
            lease_token_for(run_id=stored.run_id, epoch=expected.epoch)
        )
        assert (row.epoch, row.column) == (task.epoch, task.column)
        (event,) = Event.objects.filter(entity_id=str(stored.run_id))
        assert event.payload == {
            "runId": str(stored.run_id),
            "taskId": task.pk,
            "leaseExpiresAt": expected.expires_at.isoformat(),  # type: ignore[union-attr]
        }

    _rolled_back(check)


def _approval(w: World, task: Task, elsewhere: Run, kind: str) -> None:
    if kind == "none":
        return
    Approval.objects.create(
        workspace=w.ws,
        task=task,
        inbox_item=_item(w, elsewhere, state="decided"),
        connection=w.other if kind == "another's" else w.me,
        step="do it",
        created_at=NOW - timedelta(hours=1),
        expires_at=NOW - timedelta(minutes=1) if kind == "expired" else NOW + timedelta(hours=1),
        used_at=NOW - timedelta(minutes=5) if kind == "used" else None,
    )


def _answer(w: World, task: Task, elsewhere: Run, kind: str) -> None:
    if kind == "none":
        return
    Question.objects.create(
        workspace=w.ws,
        task=task,
        run=elsewhere,
        connection=w.me,
        text="which?",
        state="answered",
        answer="this",
        answered_at=NOW - timedelta(minutes=3),
        delivered_at=NOW - timedelta(minutes=1) if kind == "delivered" else None,
    )


@given(
    state=st.sampled_from([*RunState, RunState.ACTIVE, RunState.ACTIVE, RunState.WAITING_INPUT]),
    expires=minutes | st.integers(1, 30).map(lambda m: timedelta(minutes=m)),
    token_ok=often,
    epoch_moved=rarely,
    approved_step=rarely,
    checks=st.sampled_from([[], [], [], [{"kind": "artifact_present"}]]),
    review_required=st.booleans(),
    not_accepted=st.sampled_from([[], [{"field": "artifacts[0]", "reason": "not a url"}]]),
)
@EXAMPLES
def test_the_completion_statement_completes_exactly_when_the_lease_is_held_and_goes_where_the_rules_say(
    world, state, expires, token_ok, epoch_moved, approved_step, checks, review_required, not_accepted
):
    def check() -> None:
        w = world
        task = _task(
            w, column=Column.DOING, epoch=2 + epoch_moved, checks=checks, review_required=review_required
        )
        run = _run(w, task, state=state, expires=expires, epoch=2)
        token = lease_token_for(run_id=run.run_id, epoch=2)
        Run.objects.filter(pk=run.pk).update(lease_token_hash=token_hash(token))
        if approved_step:
            elsewhere = _run(w, _task(w, column=Column.DONE), state=RunState.COMPLETED, expires=timedelta(0))
            _approval(w, task, elsewhere, "valid")
            Run.objects.filter(pk=run.pk).update(approval=Approval.objects.get(task=task))
        before = (Report.objects.count(), InboxItem.objects.count(), Event.objects.count())
        lists = {"artifacts": [], "claims": [], "not_done": [], "unknowns": [], "not_accepted": not_accepted}
        verification: list[dict[str, Any]] = []
        passed: bool | None = None

        done = fast.complete(
            workspace_id=w.ws.pk,
            run_id=run.run_id,
            lease_token=token if token_ok else "f" * 64,
            outcome="done",
            next_step="",
            lists={**lists, "verification": verification, "passed": passed},
        )

        held = lease.is_live(state, NOW + expires, NOW) and token_ok and not epoch_moved
        may = held and not approved_step and checks == []
        label("completion statement: " + ("completed" if may else "stepped aside"))
        assert (done is not None) == may
        task.refresh_from_db()
        stored = Run.objects.get(pk=run.pk)
        if done is None:
            assert (stored.state, task.column) == (state, Column.DOING)
            assert (Report.objects.count(), InboxItem.objects.count(), Event.objects.count()) == before
            return
        after = lease.step(lease.Lease(state, 2, NOW + expires), "complete", NOW)
        review = needs_review(task, passed=passed, not_accepted=not_accepted)
        assert (stored.state, stored.lease_token_hash, stored.ended_at) == (after.state, "", NOW)
        assert task.column == (Column.DOING if review else Column.DONE) == done.task.column
        assert (task.assignee_connection_id, task.assignee_user_id) == (None, None)
        report = Report.objects.get(run=run)
        assert (report.not_accepted, report.verification, report.verification_passed) == (
            not_accepted,
            [],
            None,
        )
        assert InboxItem.objects.filter(run=run, report=report, state="open").count() == review
        types = list(Event.objects.order_by("id").values_list("type", flat=True))[-1 - review :]
        assert types == ["run.completed"] + ["inbox.item_created"] * review

    _rolled_back(check)
