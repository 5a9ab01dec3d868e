"""What one tool call costs the database, pinned: a regression in the call path fails here.

Counted across threads (the verifier and the tools run in worker threads), through the whole
in-process ASGI path. A call whose token is already verified costs two queries around the tool:
the connection re-check (`connection_live`: not revoked, seat held, with workspace and plan)
and the usage increment. The first call of a token also verifies it: access token, connection,
seat, last_used_at — and, the first time in the month, creates the usage row. On PostgreSQL
the two around the tool are one statement on the gate's own pool (weft/mcp/gate.py), and a
common claim carries the gate in its own statement (boards/services/fast.py), its relay run after
the answer (`relay_loop.relay_soon`): the count waits for that relay.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from typing import Any
from unittest import mock

import psycopg
import psycopg_pool
import pytest
from django.db.backends.utils import CursorWrapper

from accounts.connections import connection_live
from boards.models import Task
from boards.services import board_default, task_claim
from tests.mcp.harness import MCP, agent_token, in_process
from weft import apool, relay_loop
from weft.mcp import gate

pytestmark = pytest.mark.django_db(transaction=True)

if gate.enabled():  # PostgreSQL: the gate is one statement on its own pool (weft/mcp/gate.py)
    OVERHEAD = 1  # connection, seat, workspace, plan and the usage upsert
    FIRST_CALL = 5  # + verification (4); the upsert creates the month's usage row
    # The gate rides on the claim (weft.mcp.gate.Riding): the call, the claim, its run, the task
    # and its event row in one statement (boards/services/fast.py).
    GATED_CLAIM = 1
    LOOP_RELAY = 3  # BEGIN + the relay lock; the positions; COMMIT + a look for more (weft.relay_loop)
else:
    OVERHEAD = 2  # connection_live + usage_consume's UPDATE
    FIRST_CALL = 8  # + verification (4) + the month's usage row (a missed UPDATE and the INSERT)


@contextlib.contextmanager
def all_queries() -> Iterator[list[str]]:
    """SQL run through Django on any thread inside the block, and every round trip on the
    event loop's pool (weft.apool: the gate, the fast claim, the loop's relay).

    Django's execute wrappers (what CaptureQueriesContext uses) live on one thread's connection,
    so this wraps the one method every cursor's execute goes through instead.
    """
    seen: list[str] = []
    lock = threading.Lock()
    original = CursorWrapper._execute_with_wrappers  # type: ignore[attr-defined]  # not in the stubs

    def counting(self: CursorWrapper, sql: str, params: Any, many: bool, executor: Any) -> Any:
        with lock:
            seen.append(sql)
        return original(self, sql, params, many, executor)

    pooled = psycopg.AsyncRawCursor.execute

    async def round_trip(self: psycopg.AsyncRawCursor[Any], query: Any, *args: Any, **options: Any) -> Any:
        with lock:
            seen.append(str(query))
        return await pooled(self, query, *args, **options)

    with (
        mock.patch.object(CursorWrapper, "_execute_with_wrappers", counting),
        mock.patch.object(psycopg.AsyncRawCursor, "execute", round_trip),
    ):
        yield seen


@pytest.fixture
def with_noop(monkeypatch: pytest.MonkeyPatch) -> None:
    """The benchmark's no-op tool: the whole call path around no service."""
    monkeypatch.setenv("WEFT_MCP_BENCH_NOOP", "1")


def test_a_call_costs_two_queries_once_its_token_is_verified(with_noop, alice, ws_a):
    token, _ = agent_token(alice, ws_a)

    async def calls() -> list[int]:
        counts = []
        async with in_process() as client:
            mcp = MCP(client, token)
            for _ in range(3):
                with all_queries() as seen:
                    result = await mcp.call("noop")
                assert not result.get("isError"), result
                counts.append(len(seen))
        return counts

    assert asyncio.run(calls()) == [FIRST_CALL, OVERHEAD, OVERHEAD]


def test_start_task_costs_one_statement_and_its_relay(with_noop, alice, ws_a):
    token, connection = agent_token(alice, ws_a)
    board = board_default(workspace=ws_a)
    first, direct, through_mcp = (
        Task.objects.create(workspace=ws_a, board=board, title=f"Task {i}") for i in range(3)
    )
    live = connection_live(connection_id=connection.pk)
    assert live is not None
    task_claim(task_id=first.pk, connection=live)  # the workspace's first claim sets up its rows
    with all_queries() as seen:
        task_claim(task_id=direct.pk, connection=live)
    claim_only = len(seen)

    async def start() -> tuple[dict[str, Any], int]:
        async with in_process() as client:
            mcp = MCP(client, token)
            await mcp.call("noop")  # verifies the token, creates the month's usage row
            with all_queries() as seen:
                result = await mcp.call("start_task", {"id": through_mcp.pk})
                await relay_loop.settled()
        return result, len(seen)

    result, total = asyncio.run(start())
    assert not result.get("isError"), result
    if apool.enabled():
        assert total == GATED_CLAIM + LOOP_RELAY < claim_only + OVERHEAD
    else:
        assert total == claim_only + OVERHEAD


def test_complete_task_with_start_next_takes_one_pooled_connection(with_noop, alice, ws_a):
    """The completion (with the gate) and startNext's claim share the call's one connection
    (`apool.one_connection`); the relay after them takes its own, in its own task."""
    if not apool.enabled():
        pytest.skip("the loop's pool is PostgreSQL's")
    token, connection = agent_token(alice, ws_a)
    board = board_default(workspace=ws_a)
    done, following = (Task.objects.create(workspace=ws_a, board=board, title=f"Task {i}") for i in range(2))
    live = connection_live(connection_id=connection.pk)
    assert live is not None
    claim = task_claim(task_id=done.pk, connection=live)
    taken: list[str] = []
    getconn = psycopg_pool.AsyncConnectionPool.getconn

    async def counting(self: psycopg_pool.AsyncConnectionPool, *args: Any, **kwargs: Any) -> Any:
        task = asyncio.current_task()
        taken.append(task.get_coro().__name__ if task is not None else "")  # type: ignore[union-attr]
        return await getconn(self, *args, **kwargs)

    async def complete() -> dict[str, Any]:
        async with in_process() as client:
            mcp = MCP(client, token)
            await mcp.call("noop")
            await relay_loop.settled()
            taken.clear()
            with mock.patch.object(psycopg_pool.AsyncConnectionPool, "getconn", counting):
                result = await mcp.call(
                    "complete_task",
                    {
                        "runId": str(claim.run.run_id),
                        "leaseToken": claim.lease_token,
                        "outcome": "Done.",
                        "startNext": True,
                    },
                )
                await relay_loop.settled()
        return result

    result = asyncio.run(complete())
    assert not result.get("isError"), result
    assert result["structuredContent"]["next"]["started"] is True
    assert Task.objects.get(pk=following.pk).column == "doing"
    by_call = [name for name in taken if name != "_pump_relays"]
    assert len(by_call) == 1, taken
