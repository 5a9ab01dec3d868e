"""complete_task with startNext as one statement (boards.services.fast_next.COMPLETE_NEXT_SQL):
the gate, the completion and startNext's claim in one transaction, the call and the claim counted on
the month's locked usage row.

The claim's part must see what the completion's part wrote as a second statement would (the run
it ended, the review item it opened), count exactly what the two statements counted, at the cap's
edge too and under concurrent calls, and leave every other state to the two-statement path.
tests/mcp/test_gate_rides.py runs each of the gate's checks through it against the ORM path."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from django.utils import timezone
from mcp.types import CallToolResult

from accounts.models import STANDARD_PLANS, AgentConnection, Seat, Usage, Workspace, month_start
from boards import attention
from boards.models import Column, InboxItem, Run, Task
from boards.services import board_default, next_task, run_complete, run_complete_in_loop, task_claim
from tests.boards import attention_model
from tests.boards.helpers import complete
from tests.boards.test_attention_limits import fill
from weft import apool, relay_loop
from weft.hints import DONE
from weft.mcp import gate, server
from weft.models import Event

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("on_postgres")]

CAP: int = STANDARD_PLANS["free"]["monthly_agent_call_cap"]  # type: ignore[assignment]


def _calls(ws: Workspace) -> int | None:
    return (
        Usage.objects.filter(workspace=ws, kind=Usage.AGENT_CALLS, period=month_start(timezone.now().date()))
        .values_list("count", flat=True)
        .first()
    )


def _counted(ws: Workspace, count: int) -> None:
    """The month's usage row of agent calls at `count`."""
    Usage.objects.update_or_create(
        workspace=ws,
        kind=Usage.AGENT_CALLS,
        period=month_start(timezone.now().date()),
        defaults={"count": count},
    )


def _held(connection: AgentConnection, task: Task) -> dict[str, Any]:
    claim = task_claim(task_id=task.pk, connection=connection)
    return {"run_id": str(claim.run.run_id), "lease_token": claim.lease_token}


def _finishing(connection: AgentConnection, held: dict[str, Any]) -> Callable[[], Any]:
    """complete_task with startNext as the MCP server runs it: the gate riding on the statement."""

    async def call() -> CallToolResult:
        return await server._gated(
            lambda c: run_complete(workspace=c.workspace, outcome="Done.", start_next_for=c, **held),
            connection.pk,
            in_loop=False,
            fast=lambda c: run_complete_in_loop(connection=c, outcome="Done.", start_next=True, **held),
            workspace_id=connection.workspace_id,
        )

    return call


def _in_loop(*calls: Callable[[], Any]) -> list[CallToolResult]:
    async def run() -> list[CallToolResult]:
        try:
            results = await asyncio.gather(*(call() for call in calls))
            await relay_loop.settled()
            return list(results)
        finally:
            await gate.close_pool()

    return asyncio.run(run())


@pytest.fixture
def sent(monkeypatch) -> list[str]:
    """The statements the loop's pool sent, their text."""
    texts: list[str] = []
    fetch = apool._fetch_on

    async def recorded(pool, sql, params, prepare):
        texts.append(sql)
        return await fetch(pool, sql, params, prepare)

    monkeypatch.setattr(apool, "_fetch_on", recorded)
    return texts


@pytest.fixture
def no_thread(monkeypatch) -> None:
    """startNext's claim may not fall back to the ORM path."""

    def refused(*args: Any) -> None:
        raise AssertionError("startNext's claim went to the ORM path")

    monkeypatch.setattr(next_task, "_claim_next_in_thread", refused)


def _next(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result
    return (result.structured_content or {})["next"]


def test_it_completes_and_claims_in_one_statement(agent, make_task, ws_a, sent, no_thread):
    mine, following = make_task("Mine"), make_task("Following")
    held = _held(agent, mine)
    _counted(ws_a, 7)

    (result,) = _in_loop(_finishing(agent, held))

    assert _next(result)["started"] is True and _next(result)["task"]["id"] == following.pk
    assert len([text for text in sent if "boards_" in text]) == 1  # one statement: gate, completion, claim
    assert _calls(ws_a) == 9  # the call and its claim
    assert Task.objects.get(pk=mine.pk).column == Column.DONE
    run = Run.objects.get(task=following)
    assert (run.state, run.connection_id, Task.objects.get(pk=following.pk).column) == (
        "active",
        agent.pk,
        "doing",
    )
    # The lease token the answer gives is the one the run's hash was made from.
    assert _next(result)["leaseToken"] and _next(result)["runId"] == str(run.run_id)
    events = list(Event.objects.filter(workspace=ws_a, type__startswith="run.").order_by("id"))
    assert [e.type for e in events][-2:] == ["run.completed", "run.started"]
    completed, started = events[-2].position, events[-1].position
    assert events[-1].payload["taskId"] == following.pk
    assert completed is not None and started is not None and completed < started  # relayed in order


def test_the_months_first_call_creates_its_row_in_two_statements(agent, make_task, ws_a, sent):
    mine, following = make_task("Mine"), make_task("Following")
    held = _held(agent, mine)
    Usage.objects.filter(workspace=ws_a, kind=Usage.AGENT_CALLS).delete()

    (result,) = _in_loop(_finishing(agent, held))

    assert _next(result)["task"]["id"] == following.pk
    statements = [text for text in sent if "boards_" in text]
    assert len(statements) == 3  # the locked meter found no row; the gate riding, then the claim
    assert _calls(ws_a) == 2


@pytest.mark.parametrize(("before", "counted", "started"), [(CAP - 2, CAP, True), (CAP - 1, CAP, False)])
def test_at_the_caps_edge_the_claim_is_counted_only_with_room(
    agent, make_task, ws_a, before, counted, started
):
    mine, _following = make_task("Mine"), make_task("Following")
    held = _held(agent, mine)
    _counted(ws_a, before)

    (result,) = _in_loop(_finishing(agent, held))

    assert Task.objects.get(pk=mine.pk).column == Column.DONE
    assert _calls(ws_a) == counted
    assert _next(result)["started"] is started
    if not started:
        error = _next(result)["error"]
        assert error["code"] == "plan_limit_reached" and error["details"]["used"] == CAP


def test_the_review_item_it_opens_counts_in_the_claims_attention_budget(agent, make_task, ws_a, sent):
    fill(make_task, agent, 4)  # one under the solo limit of 5
    _following = make_task("Following")
    held = _held(agent, make_task("Reviewed", review_required=True))
    _counted(ws_a, 0)

    (result,) = _in_loop(_finishing(agent, held))

    assert InboxItem.objects.filter(workspace=ws_a, state="open").count() == 5
    assert _next(result)["started"] is False and _next(result)["error"]["code"] == "attention_queue_full"
    assert _calls(ws_a) == 2


def test_the_run_it_completes_does_not_hold_the_claim_back(agent, make_task, ws_a, no_thread):
    """The completed run is still live in the statement's snapshot: the pick must leave it out."""
    held = _held(agent, make_task("Mine"))
    following = make_task("Following")
    _counted(ws_a, 0)
    (result,) = _in_loop(_finishing(agent, held))
    assert _next(result)["task"]["id"] == following.pk


def test_agents_finishing_at_once_count_exactly_and_start_different_tasks(pro, alice, make_task):
    """Eight agents complete with startNext at once on the loop's pool: each claims its own task,
    the month's row counts two a call, none lost."""
    agents = [AgentConnection.objects.create(workspace=pro, user=alice, name=f"Agent {i}") for i in range(8)]
    helds = [_held(agent, make_task(f"Mine {i}")) for i, agent in enumerate(agents)]
    followers = {make_task(f"Following {i}").pk for i in range(8)}
    _counted(pro, 100)

    results = _in_loop(*(_finishing(agent, held) for agent, held in zip(agents, helds, strict=True)))

    started = [_next(result)["task"]["id"] for result in results]
    assert sorted(started) == sorted(followers)
    assert _calls(pro) == 100 + 2 * 8


def test_at_the_cap_concurrent_calls_never_overshoot_it(alice, ws_a, make_task):
    """Six calls at once with five counts left: the cap is reached, not passed, and every count is
    a call answered or a claim made."""
    agents = [AgentConnection.objects.create(workspace=ws_a, user=alice, name=f"Agent {i}") for i in range(6)]
    helds = [_held(agent, make_task(f"Mine {i}")) for i, agent in enumerate(agents)]
    for i in range(6):
        make_task(f"Following {i}")
    _counted(ws_a, CAP - 5)

    results = _in_loop(*(_finishing(agent, held) for agent, held in zip(agents, helds, strict=True)))

    answered = [r for r in results if not r.is_error]
    claims = [r for r in answered if _next(r)["started"]]
    refused = [r for r in results if r.is_error]
    assert _calls(ws_a) == CAP
    assert len(answered) + len(claims) == 5
    assert all((r.structured_content or {})["error"]["code"] == "plan_limit_reached" for r in refused)
    assert Run.objects.filter(workspace=ws_a, state="active").count() == len(claims) + len(refused)


def test_calls_that_take_the_room_meanwhile_undo_the_whole_statement(agent, make_task, ws_a):
    """Calls that commit between the statement's read of the count and its update, leaving no room
    for what it counted on: the statement fails as a whole (its completion and claim undone), and
    the call is answered as the two statements answer it, here at the cap."""
    mine, following = make_task("Mine"), make_task("Following")
    held = _held(agent, mine)
    _counted(ws_a, CAP - 2)
    usage = "UPDATE accounts_usage SET count = %s WHERE workspace_id = %s AND kind = %s"

    async def raced() -> CallToolResult:
        with psycopg.connect(**apool.conninfo()) as other, psycopg.connect(**apool.conninfo()) as watch:
            other.execute(usage, (CAP, ws_a.pk, Usage.AGENT_CALLS))  # the row held, uncommitted
            call = asyncio.ensure_future(_finishing(agent, held)())
            for _ in range(500):  # until the call's statement waits on the row
                await asyncio.sleep(0.01)
                waiting = watch.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE %s",
                    ("WITH live AS%",),  # the gate's statement in front (its text is cut short here)
                ).fetchone()
                if waiting and waiting[0]:
                    break
            else:
                raise AssertionError("the call's statement never waited on the usage row")
            other.commit()
            return await call

    (result,) = _in_loop(lambda: raced())

    assert result.is_error and (result.structured_content or {})["error"]["code"] == "plan_limit_reached"
    assert _calls(ws_a) == CAP
    assert Task.objects.get(pk=mine.pk).column == Column.DOING  # the completion undone
    assert Task.objects.get(pk=following.pk).column == Column.TODO
    assert not Event.objects.filter(type__in=["run.completed", "run.started"], payload__taskId=following.pk)


# (people, open items, each item's minutes, the completed task needs review, its review minutes):
# each side of the solo and team limits and of the minutes' limit, with and without the new item.
BUDGETS = [
    (1, 4, 1, True, 1),
    (1, 4, 1, False, 1),
    (1, 3, 1, True, 1),
    (2, 9, 1, True, 1),
    (2, 8, 1, True, 1),
    (1, 2, 20, True, 5),
    (1, 2, 20, True, 4),
    (1, 2, 20, False, 5),
]


@pytest.mark.parametrize(("people", "waiting", "each", "review", "minutes"), BUDGETS)
def test_the_claims_attention_budget_agrees_with_the_rules_after_the_completion(
    agent, make_task, ws_a, carol, monkeypatch, people, waiting, each, review, minutes
):
    """The statement claims exactly when the pure rules (`attention`) admit a start with the
    completion's review item counted; when they do not, it leaves the claim to the ORM path."""
    if people == 2:
        Seat.objects.create(workspace=ws_a, user=carol, role=Seat.MEMBER)
    assert Seat.objects.filter(workspace=ws_a).count() == people
    for i in range(waiting):
        item_task = make_task(f"Reviewed {i}", review_required=True, estimated_review_minutes=each)
        complete(task_claim(task_id=item_task.pk, connection=agent))
    held = _held(agent, make_task("Mine", review_required=review, estimated_review_minutes=minutes))
    make_task("Following")
    _counted(ws_a, 0)
    handed: list[bool] = []

    def to_the_orm(connection: AgentConnection, metered: bool) -> next_task.NextClaim:
        handed.append(metered)
        return next_task.NextClaim(claim=None, refusal=None, hint=DONE)

    monkeypatch.setattr(next_task, "_claim_next_in_thread", to_the_orm)

    (result,) = _in_loop(_finishing(agent, held))

    now = timezone.now()
    items = [attention_model.WaitingItem(now, each) for _ in range(waiting)]
    items += [attention_model.WaitingItem(now, minutes)] if review else []
    may = attention.admits(attention_model.assess_items(items, people=people, now=now), approved_step=False)
    assert _next(result)["started"] is may
    assert handed == ([] if may else [True])  # stepped aside, the claim already counted


def test_a_foreign_run_is_answered_as_before_and_counted_once(agent, agent_b, make_task, ws_a, ws_b):
    """Another workspace's run and its own token: the statement completes nothing and claims
    nothing; the ORM path answers with its error and hint, and the call is counted once."""
    foreign = Task.objects.create(workspace=ws_b, board=board_default(workspace=ws_b), title="Theirs")
    held = _held(agent_b, foreign)
    make_task("Following")
    _counted(ws_a, 3)

    (result,) = _in_loop(_finishing(agent, held))

    error = (result.structured_content or {})["error"]
    assert result.is_error and error["code"] == "lease_lost", error  # as for a run it never held
    assert (result.structured_content or {})["_next_action"] == "Fix: get_my_work {}"
    assert _calls(ws_a) == 4
    assert Task.objects.get(pk=foreign.pk).column == Column.DOING
    assert not Run.objects.filter(workspace=ws_a).exists()
