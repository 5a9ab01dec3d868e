"""The event loop's own PostgreSQL pool: statements an async caller sends without a thread hop.

The MCP gate (weft.mcp.gate) and the one-statement claim and completion (boards.services.fast)
run here on PostgreSQL, each statement its own transaction (autocommit), on a
`psycopg_pool.AsyncConnectionPool` connected to Django's default database. Its sessions use UTC,
as Django's own connections do, so a timestamp reads back as the ORM would give it.

The pool is opened lazily in the running event loop (the first statement) and closed by the
ASGI lifespan's shutdown (weft/asgi.py). A loop that opened the pool must close it
(`close_pool`) before it ends: the pool's workers keep `asyncio.run` from returning.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal, Protocol

import psycopg
from django.conf import settings
from psycopg_pool import AsyncConnectionPool

# Connection options Django reads itself; the rest are libpq's (sslmode, options, …).
DJANGO_ONLY_OPTIONS = {"pool", "server_side_binding", "isolation_level", "assume_role"}


def enabled() -> bool:
    """On PostgreSQL (unless WEFT_MCP_GATE_POOL is off); SQLite keeps every statement in the ORM."""
    database = settings.DATABASES["default"]
    return "postgresql" in database["ENGINE"] and bool(settings.WEFT_MCP_GATE_POOL.get("enabled", True))


async def fetch_one(
    sql: str, params: dict[str, Any], *, prepare: bool | None = None
) -> tuple[Any, ...] | None:
    """One statement on the loop's pool, its first row; inside `one_connection`, on that call's
    connection.

    No health check before each statement (it would be a second round trip): a connection a
    database restart broke while idle fails its statement instead; then the pool's idle
    connections are checked and the statement runs once more on a live one. A second failure
    is the caller's (`unavailable`).
    """
    pool = await _open_pool()
    try:
        return await _fetch_on(pool, sql, params, prepare)
    except _Broken:
        await _give_back(_held.get())
        await pool.check()
    try:
        return await _fetch_on(pool, sql, params, prepare)
    except _Broken as again:
        raise again.error from None


class _Connection(psycopg.AsyncConnection[Any]):
    """A pooled connection, with the cursor `_fetch_with` keeps from one statement to the next: a
    new cursor would look up every column's loader again (tests/weft/test_apool_one_connection.py)."""

    kept: psycopg.AsyncRawCursor[Any] | None = None


class _Held:
    """The connection one call's statements share (`one_connection`), taken at the first."""

    def __init__(self) -> None:
        self.conn: _Connection | None = None
        self.pool: AsyncConnectionPool[_Connection] | None = None
        self.open = True


_held: ContextVar[_Held | None] = ContextVar("weft_apool_held", default=None)


@asynccontextmanager
async def one_connection() -> AsyncIterator[None]:
    """The statements sent inside share one pooled connection (a tool call's: startNext's
    completion and claim), taken at the first and given back at the end, not once a statement."""
    held = _Held()
    token = _held.set(held)
    try:
        yield
    finally:
        _held.reset(token)
        held.open = False  # a task this call started keeps a copy of the context: not for it
        await _give_back(held)


async def _give_back(held: _Held | None) -> None:
    """The held connection back to its pool (which drops it if broken, rolls back if mid-transaction)."""
    if held is not None and held.conn is not None and held.pool is not None:
        conn, held.conn = held.conn, None
        await held.pool.putconn(conn)


class Rider(Protocol):
    """What rides on a tool's statement (weft.mcp.gate.Riding)."""

    async def carry(self, sql: str, params: dict[str, Any], final: str) -> tuple[Any, ...] | None: ...

    async def carry_counted(
        self, sql: str, params: dict[str, Any], final: str
    ) -> tuple[Any, ...] | Literal[False] | None: ...


# The rider of the tool call this task serves, until a statement carries it.
riding: ContextVar[Rider | None] = ContextVar("weft_apool_riding", default=None)


# A statement that acts for a tool call starts with this clock and ends with its last SELECT
# (`final`); the gate riding on it (weft.mcp.gate) goes in front of the CTEs between (`ctes_of`).
CLOCK = "WITH clock AS (SELECT COALESCE(%(now)s::timestamptz, statement_timestamp()) AS now),"


def ctes_of(sql: str, final: str) -> str:
    """The CTEs of a tool statement between its CLOCK and its last SELECT, `final`."""
    assert sql.startswith(CLOCK) and sql.endswith(final), "a statement the gate can ride on"
    return sql[len(CLOCK) : -len(final)].strip()


async def fetch_action(sql: str, params: dict[str, Any], *, final: str) -> tuple[Any, ...] | None:
    """`fetch_one` for a statement that acts for a tool call; the call's gate rides on it when
    it has not run yet (`final` is the statement's last SELECT). None: nothing changed."""
    rider = riding.get()
    if rider is None:
        return await fetch_one(sql, params)
    riding.set(None)
    return await rider.carry(sql, params, final)


async def fetch_counted(
    sql: str, params: dict[str, Any], *, final: str
) -> tuple[Any, ...] | Literal[False] | None:
    """`fetch_action` for a statement that counts the call itself (startNext's completion and
    claim): it carries the call's gate (weft.mcp.gate.carrying_counted). False when it cannot — the
    gate has run already, the month has no usage row yet, or other calls took the room it counted
    on — and changed nothing."""
    rider = riding.get()
    if rider is None:
        return False
    row = await rider.carry_counted(sql, params, final)
    if row is not False:
        riding.set(None)
    return row


class _Broken(Exception):
    """The statement failed because its pooled connection is broken (a restart, a dropped socket)."""

    def __init__(self, error: psycopg.OperationalError) -> None:
        super().__init__(str(error))
        self.error = error


async def _fetch_on(
    pool: AsyncConnectionPool[_Connection], sql: str, params: dict[str, Any], prepare: bool | None
) -> tuple[Any, ...] | None:
    statement = positional(sql)
    values = [params[name] for name in statement.names]
    held = _held.get()
    if held is None or not held.open:
        async with pool.connection() as conn:
            return await _fetch_with(conn, statement, values, prepare)
    if held.conn is None:
        held.conn, held.pool = await pool.getconn(), pool
    return await _fetch_with(held.conn, statement, values, prepare)


async def _fetch_with(
    conn: _Connection, statement: Positional, values: list[Any], prepare: bool | None
) -> tuple[Any, ...] | None:
    cursor = conn.kept
    if cursor is None or cursor.closed:
        cursor = conn.kept = psycopg.AsyncRawCursor(conn)
    try:
        await cursor.execute(statement.text, values, prepare=prepare)
    except psycopg.OperationalError as exc:
        if conn.broken:
            raise _Broken(exc) from exc
        raise
    return await cursor.fetchone()


@asynccontextmanager
async def connection() -> AsyncIterator[psycopg.AsyncConnection[Any]]:
    """A pooled connection for an exchange of several statements (the loop's relay, weft/relay_loop.py).

    It is in autocommit: a caller that opens a transaction with `BEGIN` ends it, and one it left
    open (an error mid-way) is rolled back here before the connection goes back to the pool.
    """
    pool = await _open_pool()
    async with pool.connection() as conn:
        try:
            yield conn
        finally:
            if not conn.broken and conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                # A connection that cannot roll back is broken: the pool drops it.
                with suppress(psycopg.Error):
                    await conn.execute("ROLLBACK")


@dataclass(frozen=True)
class Positional:
    """A statement with its `%(name)s` placeholders numbered as PostgreSQL's `$1`, `$2`, … and
    the names in that order (a name used twice is one parameter)."""

    text: bytes
    names: tuple[str, ...]


_PLACEHOLDER = re.compile(r"%\((\w+)\)s")


@cache
def positional(sql: str) -> Positional:
    """`sql` numbered once, where psycopg would read it again on every call: it remembers how it
    read a statement only under 4 KB, and startNext's claim is over (tests/weft/test_apool.py).
    The pooled statements are module constants, so the cache holds a handful."""
    names: list[str] = []

    def number(match: re.Match[str]) -> str:
        if match[1] not in names:
            names.append(match[1])
        return f"${names.index(match[1]) + 1}"

    text = _PLACEHOLDER.sub(number, sql)
    if "%" in text:
        raise ValueError("a pooled statement takes %(name)s placeholders only")
    return Positional(text=text.encode(), names=tuple(names))


class _Pools:
    """The pool of the running event loop (a test process runs several loops one after another)."""

    pool: AsyncConnectionPool[_Connection] | None = None
    loop: asyncio.AbstractEventLoop | None = None
    lock: asyncio.Lock | None = None


def conninfo() -> dict[str, Any]:
    """libpq parameters for Django's default database (its test database under the test runner)."""
    database = settings.DATABASES["default"]
    params = {
        "dbname": database["NAME"],
        "user": database.get("USER") or None,
        "password": database.get("PASSWORD") or None,
        "host": database.get("HOST") or None,
        "port": database.get("PORT") or None,
    }
    options = {k: v for k, v in (database.get("OPTIONS") or {}).items() if k not in DJANGO_ONLY_OPTIONS}
    return {k: v for k, v in {**params, **options}.items() if v is not None}


async def _open_pool() -> AsyncConnectionPool[_Connection]:
    loop = asyncio.get_running_loop()
    if _Pools.pool is not None and _Pools.loop is loop:
        return _Pools.pool
    if _Pools.loop is not loop:
        # A pool of a loop that has ended cannot be closed from this one; its connections go
        # with it. The lifespan's shutdown closes the pool of a server's own loop.
        _Pools.pool, _Pools.loop, _Pools.lock = None, loop, asyncio.Lock()
    assert _Pools.lock is not None
    async with _Pools.lock:
        if _Pools.pool is None:
            config = settings.WEFT_MCP_GATE_POOL
            pool = AsyncConnectionPool(
                kwargs={**conninfo(), "autocommit": True},
                connection_class=_Connection,
                min_size=config.get("min_size", 1),
                max_size=config.get("max_size", 4),
                timeout=config.get("timeout", 10),
                open=False,
                name="weft-mcp-gate",
                configure=_utc,
            )
            await pool.open()
            _Pools.pool = pool
        return _Pools.pool


async def _utc(conn: psycopg.AsyncConnection[Any]) -> None:
    await conn.execute("SET TIME ZONE 'UTC'")


async def close_pool() -> None:
    """Close this loop's pool (the ASGI lifespan's shutdown); the next call opens a new one."""
    pool, loop = _Pools.pool, _Pools.loop
    _Pools.pool = None
    if pool is not None and loop is asyncio.get_running_loop():
        await pool.close()
