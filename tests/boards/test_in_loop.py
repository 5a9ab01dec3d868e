"""The claim, the completion and startNext's claim from the event loop (PostgreSQL): the same
one statements on the loop's own pool (weft.apool), without a thread. They answer as the ORM path
does, step aside (changing nothing) in every other state, and their events are positioned by the
loop's relay (`relay_loop.relay_soon`) without the answer waiting for it.

The loop's pool commits on its own connections, so these tests run with real transactions."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

import psycopg
import pytest
from django.utils import timezone

from accounts.models import AgentConnection, Seat, Usage, month_start
from boards.models import Approval, Column, InboxItem, Question, Run, Task
from boards.services import (
    board_archive,
    board_create,
    fast_next,
    run_complete_in_loop,
    task_claim,
    task_claim_in_loop,
)
from boards.services.work import _best_next
from tests.boards.helpers import beat, complete
from tests.boards.test_fast_paths import IDS_AND_INSTANTS
from weft import apool, relay_loop
from weft.models import Event

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("on_postgres")]


def _in_loop[T](make: Callable[[], Awaitable[T]]) -> T:
    """Run `make()` in an event loop as the server does; wait for the loop's relay before it ends."""

    async def run() -> T:
        try:
            result = await make()
            await relay_loop.settled()
            return result
        finally:
            await apool.close_pool()

    return asyncio.run(run())


def _norm(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _norm(v) for k, v in value.items() if k not in IDS_AND_INSTANTS | {"leaseExpiresAt"}}
    if isinstance(value, list):
        return [_norm(v) for v in value]
    return value


def test_it_claims_in_the_loop_as_the_orm_path_does(agent, make_task):
    one, two = make_task("same", description="d"), make_task("same", description="d")
    orm = task_claim(task_id=one.pk, connection=agent)
    loop = _in_loop(lambda: task_claim_in_loop(task_id=two.pk, connection=agent))
    assert loop is not None
    assert _norm(loop.payload()) == _norm(orm.payload())
    assert loop.summary().splitlines()[0] == f"Started task {two.pk}: same"
    # The hint is runnable: report_progress with the run and token it names renews the lease.
    assert loop.hint.call is not None and loop.hint.call.tool == "report_progress"
    assert loop.hint.call.args["leaseToken"] == loop.lease_token
    assert beat(loop).action == "heartbeat"
    run = Run.objects.get(run_id=loop.run.run_id)
    assert (run.state, run.connection_id, run.task_id) == ("active", agent.pk, two.pk)
    started = Event.objects.get(type="run.started", entity_id=str(loop.run.run_id))
    assert started.position is not None  # the loop's relay positioned it


def test_it_never_waits_on_a_task_another_transaction_holds(agent, make_task):
    """A task locked elsewhere (startNext's pick, which counts its call after it) is handed to the
    ORM path at once: waiting here, with the riding gate's count holding the usage row, the two
    would wait on each other. Once the lock is gone, the same claim goes through."""
    task = make_task()
    with psycopg.connect(**apool.conninfo()) as other:
        other.execute("SELECT 1 FROM boards_task WHERE id = %s FOR UPDATE", (task.pk,))
        gone = threading.Timer(5.0, other.close)  # a claim that waited would then claim: and fail here
        gone.start()
        try:
            assert _in_loop(lambda: task_claim_in_loop(task_id=task.pk, connection=agent)) is None
        finally:
            gone.cancel()
    assert _in_loop(lambda: task_claim_in_loop(task_id=task.pk, connection=agent)) is not None


def test_it_hands_a_claimed_task_back_to_the_orm_path_unchanged(agent, agent2, make_task):
    task = make_task()
    task_claim(task_id=task.pk, connection=agent)
    before = Task.objects.get(pk=task.pk)
    assert _in_loop(lambda: task_claim_in_loop(task_id=task.pk, connection=agent2)) is None
    after = Task.objects.get(pk=task.pk)
    assert (after.epoch, after.column, after.assignee_connection_id) == (
        before.epoch,
        before.column,
        before.assignee_connection_id,
    )
    assert Run.objects.filter(task=task).count() == 1


def test_a_reclaimed_task_reads_its_last_run_in_a_thread(agent, make_task):
    task = make_task()
    first = task_claim(task_id=task.pk, connection=agent)
    beat(first, note="half way")
    from tests.boards.helpers import release

    release(first)
    again = _in_loop(lambda: task_claim_in_loop(task_id=task.pk, connection=agent))
    assert again is not None and again.run.epoch > 1
    assert "half way" in again.context["lastRunNotes"]


def _completion(claim: Any, **kwargs: Any) -> Callable[[], Awaitable[Any]]:
    kwargs.setdefault("outcome", "done")
    # Read here, as the gate hands it over (workspace and plan loaded): the loop may not touch the ORM.
    connection = AgentConnection.objects.select_related("workspace__plan").get(pk=claim.run.connection_id)
    return lambda: run_complete_in_loop(
        connection=connection, run_id=claim.run.run_id, lease_token=claim.lease_token, **kwargs
    )


@pytest.mark.parametrize("review", [False, True], ids=["to Done", "to the Inbox"])
def test_it_completes_in_the_loop_as_the_orm_path_does(agent, make_task, review):
    one, two = make_task("same", review_required=review), make_task("same", review_required=review)
    orm = complete(task_claim(task_id=one.pk, connection=agent))
    loop = _in_loop(_completion(task_claim(task_id=two.pk, connection=agent)))
    assert loop is not None
    assert _norm(loop.payload()) == _norm(orm.payload())
    assert str(loop.hint) == str(orm.hint).replace(str(one.pk), str(two.pk))
    assert Task.objects.get(pk=two.pk).column == (Column.DOING if review else Column.DONE)
    assert InboxItem.objects.filter(task=two).exists() is review
    types = set(
        Event.objects.filter(payload__taskId=two.pk, position__isnull=False).values_list("type", flat=True)
    )
    assert {"run.completed", *({"inbox.item_created"} if review else set())} <= types


def test_a_wrong_lease_token_changes_nothing_in_the_loop(agent, make_task):
    claim = task_claim(task_id=make_task().pk, connection=agent)
    claim.lease_token = claim.lease_token[:-1] + ("0" if claim.lease_token[-1] != "0" else "1")
    assert _in_loop(_completion(claim)) is None
    assert Run.objects.get(run_id=claim.run.run_id).state == "active"


def _used() -> int:
    row = Usage.objects.filter(period=month_start(timezone.now().date()), kind=Usage.AGENT_CALLS).first()
    return row.count if row else 0


def test_start_next_claims_the_task_get_my_work_names(agent, ws_a, alice, make_task):
    low = make_task("low", priority=0)
    make_task("high but later", priority=2, due_at=timezone.now() + timedelta(days=3))
    soon = make_task("high and sooner", priority=2, due_at=timezone.now() + timedelta(days=1))
    seat = Seat.objects.get(workspace=ws_a, user=alice)
    other = board_create(workspace=ws_a, name="Other", by_seat=seat)
    archived = make_task("archived", priority=3, board=other)
    board_archive(board=other, by_seat=seat)
    Task.objects.filter(pk__in=[low.pk, soon.pk, archived.pk]).update(column=Column.TODO)
    Task.objects.filter(title="high but later").update(column=Column.TODO)
    best = _best_next(ws_a.pk)
    assert best is not None and best.pk == soon.pk
    held = task_claim(task_id=make_task("now").pk, connection=agent)
    used = _used()
    done = _in_loop(_completion(held, start_next=True))
    assert done.next is not None and done.next.claim is not None
    assert done.next.claim.task.pk == soon.pk
    assert done.hint == done.next.claim.hint
    assert _used() == used + 1  # the next claim is counted as the start_task it replaces, once


@pytest.mark.parametrize("before", ["live run", "approval", "answer"])
def test_start_next_leaves_what_comes_first_to_the_orm_path(agent, ws_a, alice, make_task, before):
    """A live run, an unused approval or an answer waiting comes before the best next task: the
    statement steps aside and the ORM path answers, counting the call once."""
    best = make_task("best", priority=3)
    Task.objects.filter(pk=best.pk).update(column=Column.TODO)
    held = task_claim(task_id=make_task("now").pk, connection=agent)
    first = Task.objects.get(pk=make_task("first").pk)
    if before == "live run":
        task_claim(task_id=first.pk, connection=agent)
    elif before == "approval":
        run = task_claim(task_id=first.pk, connection=agent).run
        item = InboxItem.objects.create(workspace=ws_a, kind="review", task=first, run=run, state="decided")
        Approval.objects.create(
            workspace=ws_a,
            task=first,
            inbox_item=item,
            connection=agent,
            step="go",
            created_at=timezone.now(),
            expires_at=timezone.now() - timedelta(days=1),  # expired, unused: still the ORM path's to judge
        )
        Run.objects.filter(pk=run.pk).update(state="released")
        Task.objects.filter(pk=first.pk).update(column=Column.TODO)
    else:
        run = task_claim(task_id=first.pk, connection=agent).run
        Question.objects.create(
            workspace=ws_a, task=first, run=run, connection=agent, text="?", state="answered", answer="yes"
        )
        Run.objects.filter(pk=run.pk).update(state="released")
        Task.objects.filter(pk=first.pk).update(column=Column.TODO)
    picked = _in_loop(
        lambda: fast_next.claim_next_in_loop(workspace_id=ws_a.pk, connection_id=agent.pk, cap=None)
    )
    assert picked.admitted and picked.claimed is None
    used = _used()
    done = _in_loop(_completion(held, start_next=True))
    assert done.next is not None
    assert _used() == used + 1
    if before == "answer":
        assert done.next.claim is not None and done.next.claim.task.pk == first.pk


def test_start_next_refused_by_the_cap_keeps_the_report(agent, ws_a, make_task):
    held = task_claim(task_id=make_task().pk, connection=agent)
    waiting = make_task("next", column=Column.TODO)
    plan = ws_a.plan
    plan.monthly_agent_call_cap = _used()
    plan.save()
    done = _in_loop(_completion(held, start_next=True))
    assert done.next is not None and done.next.claim is None
    assert done.next.refusal is not None and done.next.refusal.code == "plan_limit_reached"
    assert done.next.refusal.details["used"] == done.next.refusal.details["limit"] == _used()
    assert Run.objects.get(run_id=held.run.run_id).state == "completed"
    # Refused, the statement claimed nothing: the next task is still Todo, with no run.
    assert Task.objects.get(pk=waiting.pk).column == Column.TODO
    assert not Run.objects.filter(task=waiting).exists()


def test_start_next_counts_the_call_up_to_the_cap_exactly(agent, ws_a, make_task):
    """One call left under the cap: the next claim takes it; the count lands on the cap."""
    held = task_claim(task_id=make_task().pk, connection=agent)
    waiting = make_task("next", column=Column.TODO)
    plan = ws_a.plan
    plan.monthly_agent_call_cap = _used() + 1
    plan.save()
    done = _in_loop(_completion(held, start_next=True))
    assert done.next is not None and done.next.claim is not None
    assert done.next.claim.task.pk == waiting.pk
    assert _used() == plan.monthly_agent_call_cap
