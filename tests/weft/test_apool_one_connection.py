"""One call's statements on one pooled connection (weft.apool.one_connection), on PostgreSQL.

A tool call that sends two statements (startNext's completion, then its claim) takes a pooled
connection once: the statements share it, nobody else gets it meanwhile, and it goes back to
the pool when the call ends, whatever happened. A connection a restart broke is given back and
the statement runs again on a live one, as outside a call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import psycopg
import pytest

from weft import apool

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("on_postgres", "fixed_pool"),
]


@pytest.fixture
def fixed_pool(settings: Any) -> None:
    """A pool of three connections that neither grows nor shrinks: what is in use is counted."""
    settings.WEFT_MCP_GATE_POOL = {**settings.WEFT_MCP_GATE_POOL, "min_size": 3, "max_size": 3}


PID = "SELECT pg_backend_pid()"


def in_loop[T](make: Callable[[], Awaitable[T]]) -> T:
    async def run() -> T:
        try:
            await (await apool._open_pool()).wait()  # all three connections open
            return await make()
        finally:
            await apool.close_pool()

    return asyncio.run(run())


async def pid() -> int:
    row = await apool.fetch_one(PID, {})
    assert row is not None
    return int(row[0])


async def in_use() -> int:
    """Connections taken from the loop's pool and not given back."""
    stats = (await apool._open_pool()).get_stats()
    return int(stats["pool_size"]) - int(stats["pool_available"])


def test_a_calls_statements_share_one_connection_that_nobody_else_gets_meanwhile():
    async def go() -> tuple[list[int], int, int]:
        await asyncio.gather(*(pid() for _ in range(3)))  # the pool has several connections
        async with apool.one_connection():
            first = await pid()
            # Another call (a task outside this context) runs while this one holds its connection.
            other = await asyncio.create_task(_outside(pid))
            second = await pid()
            during = await in_use()
        return [first, second, other], during, await in_use()

    (first, second, other), during, after = in_loop(go)
    assert first == second
    assert other != first
    assert during == 1
    assert after == 0


async def _outside[T](make: Callable[[], Awaitable[T]]) -> T:
    """`make()` as a call that holds no connection (a fresh context, as another request's)."""
    token = apool._held.set(None)
    try:
        return await make()
    finally:
        apool._held.reset(token)


def test_the_connection_goes_back_when_the_call_fails():
    async def go() -> int:
        with pytest.raises(psycopg.errors.DivisionByZero):
            async with apool.one_connection():
                await pid()
                await apool.fetch_one("SELECT 1 / 0", {})
        return await in_use()

    assert in_loop(go) == 0


def test_a_statement_after_a_refused_one_runs_on_the_same_connection():
    """Each statement is its own transaction: a refusal leaves the held connection usable."""

    async def go() -> tuple[int, int, Any]:
        async with apool.one_connection():
            first = await pid()
            with pytest.raises(psycopg.errors.DivisionByZero):
                await apool.fetch_one("SELECT 1 / 0", {})
            return first, await pid(), await apool.fetch_one("SELECT 2", {})

    first, second, row = in_loop(go)
    assert first == second
    assert row == (2,)


def test_a_held_connection_broken_midway_is_replaced_and_the_statement_runs():
    async def go() -> tuple[int, int, int]:
        async with apool.one_connection():
            killed = await pid()
            async with await psycopg.AsyncConnection.connect(**apool.conninfo(), autocommit=True) as other:
                # With a timeout, pg_terminate_backend returns once the backend has gone (or after 5 s).
                await other.execute("SELECT pg_terminate_backend(%s, 5000)", [killed])
            again = await pid()
        return killed, again, await settled_in_use()

    killed, again, after = in_loop(go)
    assert again != killed
    assert after == 0  # the broken one went back (the pool replaced it), so did the live one


async def settled_in_use() -> int:
    """`in_use()` once the pool has replaced the connections it dropped (5 s at most)."""
    for _ in range(50):
        if not await in_use():
            break
        await asyncio.sleep(0.1)
    return await in_use()


def test_a_task_the_call_started_takes_its_own_connection_after_the_call():
    """relay_soon()'s task copies the call's context; once the call has given its connection
    back, the task's statements take a connection of their own, and give it back."""

    async def go() -> int:
        go_on = asyncio.Event()

        async def later() -> int:
            await go_on.wait()
            return await pid()

        async with apool.one_connection():
            await pid()
            task = asyncio.create_task(later())
        go_on.set()
        await task
        return await in_use()

    assert in_loop(go) == 0


def test_a_connection_keeps_its_cursor_and_each_statement_reads_its_own_columns():
    """`_fetch_with` keeps one cursor a connection; statements of other shapes, one refused
    between them, each read back their own row."""
    shapes = [
        ("SELECT 1::bigint, 'a'::text", {}),
        ("SELECT %(at)s::timestamptz, '{\"k\": [1]}'::jsonb, true", {"at": "2026-12-07T00:00:00Z"}),
        ("SELECT gen_random_uuid() IS NOT NULL, NULL::int", {}),
    ]

    async def go() -> tuple[list[Any], list[Any]]:
        rows: list[Any] = []
        cursors: list[Any] = []
        async with apool.one_connection():
            for sql, params in shapes:
                rows.append(await apool.fetch_one(sql, params))
                conn = _held_connection()
                cursors.append(conn.kept)
            with pytest.raises(psycopg.errors.DivisionByZero):
                await apool.fetch_one("SELECT 1 / 0", {})
            rows.append(await apool.fetch_one(*shapes[0]))
            cursors.append(conn.kept)
        return rows, cursors

    rows, cursors = in_loop(go)
    assert rows[0] == (1, "a")
    assert rows[1][0].isoformat() == "2026-12-07T00:00:00+00:00"
    assert rows[1][1:] == ({"k": [1]}, True)
    assert rows[2] == (True, None)
    assert rows[3] == (1, "a")
    assert cursors[0] is not None
    assert all(cursor is cursors[0] for cursor in cursors), "one cursor for every statement on the connection"


def _held_connection() -> apool._Connection:
    held = apool._held.get()
    assert held is not None and isinstance(held.conn, apool._Connection)
    return held.conn
