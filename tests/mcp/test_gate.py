"""The MCP gate in the event loop (weft/mcp/gate.py, PostgreSQL) answers exactly as the ORM path does.

Every check the gate makes — no connection, unknown or revoked connection, removed seat, deleted
or suspended workspace, the plan's monthly cap of agent calls — runs through both paths on the
same rows: the ORM path in a thread (`_run_for_connection`) and the one statement on the async
pool (`_gated`). Both must give the same answer, count the same usage and hand the tool the same
connection, workspace and plan. Then: concurrent calls from the loop and from threads neither
lose a count nor overshoot the cap; a no-op never leaves the event loop; the lifespan closes the pool.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from datetime import date
from typing import Any

import pytest
from django.utils import timezone
from mcp.types import CallToolResult

from accounts.connections import connection_revoke
from accounts.models import AgentConnection, Plan, Seat, Usage, User, Workspace, month_start
from accounts.services import workspace_set_suspended
from tests.mcp.harness import MCP, agent_token, in_process
from weft.hints import DONE
from weft.mcp import gate, server

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("on_postgres")]

CAP = Usage.AGENT_CALLS


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def _described(connection: AgentConnection) -> CallToolResult:
    """A tool that answers with everything the gate loaded, so both paths' objects are compared."""
    workspace, plan = connection.workspace, connection.workspace.plan
    payload = {
        "connection": [connection.pk, connection.name, connection.user_id, connection.workspace_id],
        "more": [connection.application_id, _iso(connection.created_at), _iso(connection.revoked_at)],
        "client": [connection.client_name, connection.client_version],
        "workspace": [workspace.pk, workspace.name, workspace.slug, workspace.plan_id],
        "state": [workspace.billing_period, workspace.is_suspended, _iso(workspace.created_at)],
        "plan": [plan.pk, plan.code, plan.name, plan.monthly_task_cap, plan.monthly_agent_call_cap],
        "prices": [plan.seat_price_month_cents, plan.seat_price_year_cents],
    }
    return server.success_result("Described.", payload, DONE)


def _month() -> date:
    return month_start(timezone.now().date())


def _used(workspace: Workspace, value: int) -> None:
    Usage.objects.create(workspace=workspace, period=_month(), kind=CAP, count=value)


def _on_plan(workspace: Workspace, cap: int | None) -> None:
    plan = Plan.objects.create(code=f"cap-{cap}", name=f"Cap {cap}", monthly_agent_call_cap=cap)
    Workspace.objects.filter(pk=workspace.pk).update(plan=plan)


def _member(workspace: Workspace) -> User:
    user = User.objects.create_user(email="member@example.com", password="x" * 20)
    Seat.objects.create(workspace=workspace, user=user, role=Seat.MEMBER)
    return user


def _revoked(w: Workspace, c: AgentConnection) -> int:
    connection_revoke(connection=c)
    return c.pk


def _seat_removed(w: Workspace, c: AgentConnection) -> int:
    Seat.objects.filter(workspace=w, user=c.user_id).delete()
    return c.pk


def _workspace_deleted(w: Workspace, c: AgentConnection) -> int:
    Workspace.objects.filter(pk=w.pk).delete()
    return c.pk


def _suspended(w: Workspace, c: AgentConnection, used: int | None = None) -> int:
    workspace_set_suspended(workspace=w, suspended=True)
    return _with_usage(w, c, used)


def _with_usage(w: Workspace, c: AgentConnection, used: int | None, cap: int | str | None = "free") -> int:
    if cap != "free":
        _on_plan(w, cap if isinstance(cap, int) else None)
    if used is not None:
        _used(w, used)
    return c.pk


def _members(w: Workspace, c: AgentConnection) -> int:
    member = _member(w)
    return AgentConnection.objects.create(
        workspace=w, user=member, name="Member's agent", client_name="cli", client_version="1"
    ).pk


# Each case: the rows before the call → the connection id the call carries (the free plan: 200 calls).
CASES: dict[str, Callable[[Workspace, AgentConnection], int | None]] = {
    "no connection": lambda w, c: None,
    "unknown connection": lambda w, c: 10**9,
    "revoked connection": _revoked,
    "seat removed": _seat_removed,
    "workspace deleted": _workspace_deleted,
    "workspace suspended": _suspended,
    "suspended at the cap": lambda w, c: _suspended(w, c, used=200),
    "cap reached": lambda w, c: _with_usage(w, c, 200),
    "over the cap after a downgrade": lambda w, c: _with_usage(w, c, 500),
    "cap of zero, no row yet": lambda w, c: _with_usage(w, c, None, cap=0),
    "last call under the cap": lambda w, c: _with_usage(w, c, 199),
    "first call of the month": lambda w, c: c.pk,
    "no cap": lambda w, c: _with_usage(w, c, 10**6, cap=None),
    "member's connection": _members,
}


def _usage(workspace_id: int) -> list[tuple[date, str, int]]:
    return sorted(Usage.objects.filter(workspace_id=workspace_id).values_list("period", "kind", "count"))


def _restore(workspace_id: int, rows: list[tuple[date, str, int]]) -> None:
    Usage.objects.filter(workspace_id=workspace_id).delete()
    if Workspace.objects.filter(pk=workspace_id).exists():
        Usage.objects.bulk_create(
            [Usage(workspace_id=workspace_id, period=p, kind=k, count=n) for p, k, n in rows]
        )


def _through_gate(fn: Callable[[Any], Any], connection_id: int | None, *, in_loop: bool) -> CallToolResult:
    async def run() -> CallToolResult:
        try:
            return await server._gated(fn, connection_id, in_loop=in_loop)
        finally:
            await gate.close_pool()

    return asyncio.run(run())


def _answer(result: CallToolResult) -> tuple[Any, ...]:
    return (result.is_error, result.structured_content, [c.model_dump() for c in result.content])


@pytest.mark.parametrize("in_loop", [False, True], ids=["tool in a thread", "tool in the loop"])
@pytest.mark.parametrize("case", list(CASES))
def test_each_check_answers_the_same_through_the_orm_and_the_gate(alice, ws_a, case, in_loop):
    connection = AgentConnection.objects.create(workspace=ws_a, user=alice, name="Claude Code")
    connection_id = CASES[case](ws_a, connection)
    before = _usage(ws_a.pk)

    orm = server._run_for_connection(_described, connection_id)
    after_orm = _usage(ws_a.pk)
    _restore(ws_a.pk, before)
    gated = _through_gate(_described, connection_id, in_loop=in_loop)
    after_gate = _usage(ws_a.pk)

    assert _answer(gated) == _answer(orm)
    assert after_gate == after_orm
    if not orm.is_error:  # the case reached the tool: the gate counted the call
        assert sum(n for *_, n in after_gate) == sum(n for *_, n in before) + 1


def test_the_checks_come_in_the_orm_paths_order(alice, ws_a):
    """The pinned answers of a few cases, so that "the same" is also right."""
    connection = AgentConnection.objects.create(workspace=ws_a, user=alice, name="Claude Code")
    codes = {}
    for case in ("no connection", "suspended at the cap", "cap reached", "seat removed"):
        connection_id = CASES[case](ws_a, connection)
        result = _through_gate(_described, connection_id, in_loop=True)
        codes[case] = (result.structured_content or {}).get("error", {}).get("code")
        workspace_set_suspended(workspace=ws_a, suspended=False)
        Usage.objects.filter(workspace=ws_a).delete()
    assert codes == {
        "no connection": "unauthenticated",
        "suspended at the cap": "workspace_suspended",
        "cap reached": "plan_limit_reached",
        "seat removed": "unauthenticated",
    }


def _noop(connection: AgentConnection) -> CallToolResult:
    return server.success_result("Nothing done.", {}, DONE)


def _race(connection_id: int, *, in_loop_calls: int, thread_calls: int) -> list[str]:
    """Calls from the event loop (the gate's pool) and from threads (the ORM path), all at once."""
    start = threading.Barrier(thread_calls + 1)
    codes: list[str] = []

    def code(result: CallToolResult) -> str:
        return str((result.structured_content or {}).get("error", {}).get("code", "ok"))

    def in_thread() -> None:
        start.wait()
        codes.append(code(server._run_for_connection(_noop, connection_id)))

    async def in_loop() -> list[CallToolResult]:
        await gate._open_pool()
        start.wait()
        try:
            return await asyncio.gather(
                *(server._gated(_noop, connection_id, in_loop=True) for _ in range(in_loop_calls))
            )
        finally:
            await gate.close_pool()

    threads = [threading.Thread(target=in_thread) for _ in range(thread_calls)]
    for thread in threads:
        thread.start()
    codes.extend(code(result) for result in asyncio.run(in_loop()))
    for thread in threads:
        thread.join()
    return codes


@pytest.fixture
def wide_pool(settings) -> None:
    settings.WEFT_MCP_GATE_POOL = {**settings.WEFT_MCP_GATE_POOL, "min_size": 8, "max_size": 8}


@pytest.mark.parametrize("cap", [None, 20])
def test_concurrent_calls_from_loop_and_threads_count_every_call_up_to_the_cap(wide_pool, alice, ws_a, cap):
    _on_plan(ws_a, cap)
    connection = AgentConnection.objects.create(workspace=ws_a, user=alice, name="Claude Code")
    codes = _race(connection.pk, in_loop_calls=60, thread_calls=6)  # the month's row does not exist yet

    admitted = codes.count("ok")
    assert admitted == (66 if cap is None else cap)
    assert set(codes) <= {"ok", "plan_limit_reached"}
    assert _usage(ws_a.pk) == [(_month(), CAP, admitted)]


@pytest.fixture
def with_noop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEFT_MCP_BENCH_NOOP", "1")


def test_a_noop_never_leaves_the_event_loop_and_a_tool_hops_once(with_noop, alice, ws_a, monkeypatch):
    token, _ = agent_token(alice, ws_a)
    hops: list[str] = []
    real = server.sync_to_async

    def counting(fn: Any, **kwargs: Any) -> Any:
        hops.append(fn.__name__)
        return real(fn, **kwargs)

    async def calls() -> list[dict[str, Any]]:
        async with in_process() as client:
            mcp = MCP(client, token)
            first = await mcp.call("noop")  # verifies the token (in the verifier's thread)
            monkeypatch.setattr(server, "sync_to_async", counting)
            return [first, await mcp.call("noop"), await mcp.call("noop"), await mcp.call("get_my_work")]

    results = asyncio.run(calls())
    assert [r.get("isError", False) for r in results] == [False] * 4, results
    assert hops == ["_run_for_connection"]  # get_my_work's service; the no-ops' gate ran in the loop
    assert _usage(ws_a.pk) == [(_month(), CAP, 4)]


def test_the_lifespan_closes_the_pool_the_first_call_opened(with_noop, alice, ws_a):
    token, _ = agent_token(alice, ws_a)

    async def run() -> tuple[bool, bool]:
        async with in_process() as client:
            assert gate._Pools.pool is None
            result = await MCP(client, token).call("noop")
            assert not result.get("isError"), result
            pool = gate._Pools.pool
            assert pool is not None and not pool.closed
        closed, forgotten = pool.closed, gate._Pools.pool is None
        await pool.close()  # a pool left open would hang this loop's end, not fail the test
        return closed, forgotten

    assert asyncio.run(run()) == (True, True)
