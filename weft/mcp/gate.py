"""The gate of every MCP tool call on PostgreSQL: one statement on an async pool, in the event loop.

Before a tool runs, its caller's connection must be live (not revoked, its person still holding a
seat in its workspace, the workspace not suspended) and the call is counted against the plan's
monthly cap of agent calls. On SQLite (the embedded default) weft.mcp.server does this through the
ORM in a worker thread (`connection_live`, `require_active_workspace`, `usage_consume`); on
PostgreSQL `admit` does the same as one round trip — a `WITH` statement that reads the
connection, its workspace and plan, checks the seat and upserts this month's usage row under the
cap (`INSERT … ON CONFLICT DO UPDATE … WHERE count + 1 <= cap`, so concurrent calls neither lose
a count nor overshoot) — on `psycopg_pool.AsyncConnectionPool`, without a thread hop.
tests/mcp/test_gate.py runs every refusal through both paths and compares the answers.

The pool is opened lazily in the running event loop (the first tool call) and closed by the
ASGI lifespan's shutdown (weft/asgi.py). It connects to Django's default database, autocommit:
each statement is its own transaction, as the ORM path's two were. A loop that opened the pool
must close it (`close_pool`) before it ends: the pool's workers keep `asyncio.run` from returning.
"""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
from django.conf import settings
from django.db import models
from django.utils import timezone
from psycopg_pool import AsyncConnectionPool

from accounts.access import require_active_workspace
from accounts.models import AgentConnection, Plan, Seat, Usage, Workspace, month_start
from accounts.services.workspaces import usage_refusal
from weft.errors import WeftError
from weft.hints import wait

KIND = Usage.AGENT_CALLS
MODELS: tuple[type[models.Model], ...] = (AgentConnection, Workspace, Plan)
# Connection options Django reads itself; the rest are libpq's (sslmode, options, …).
DJANGO_ONLY_OPTIONS = {"pool", "server_side_binding", "isolation_level", "assume_role"}


def unauthenticated() -> WeftError:
    return WeftError(
        "unauthenticated",
        "this call carries no signed-in agent connection",
        fix=wait("the person signs the agent in to Weft again", "get_my_work"),
    )


def enabled() -> bool:
    """The gate runs here on PostgreSQL (unless WEFT_MCP_GATE_POOL is off); SQLite keeps the ORM path."""
    database = settings.DATABASES["default"]
    return "postgresql" in database["ENGINE"] and bool(settings.WEFT_MCP_GATE_POOL.get("enabled", True))


def _fields(model: type[models.Model]) -> list[models.Field[Any, Any]]:
    return list(model._meta.concrete_fields)


def _statement() -> str:
    """The gate as one statement: %(connection)s, %(period)s, %(kind)s → one row, or none if not live.

    A suspended workspace meters nothing; under a cap of 0 the month's row is created at 0 and
    the call refused, as `usage_consume` leaves them. `used` is the count before this statement.
    """
    aliases = ("c", "w", "p")
    columns = ", ".join(
        f'{alias}."{field.column}" AS {alias}{i}'
        for alias, model in zip(aliases, MODELS, strict=True)
        for i, field in enumerate(_fields(model))
    )
    tables: tuple[type[models.Model], ...] = (*MODELS, Seat, Usage)
    table = {model: model._meta.db_table for model in tables}
    cap = Plan._meta.get_field("monthly_agent_call_cap").column
    seat = f"SELECT 1 FROM {table[Seat]} s WHERE s.workspace_id = c.workspace_id AND s.user_id = c.user_id"  # noqa: S608
    month = "u.workspace_id = live.workspace AND u.period = %(period)s AND u.kind = %(kind)s"
    # Table and column names from the models' meta; every value is a parameter.
    return f"""
WITH live AS (
    SELECT {columns}, w.is_suspended AS suspended, p."{cap}" AS cap, w.id AS workspace
    FROM {table[AgentConnection]} c
    JOIN {table[Workspace]} w ON w.id = c.workspace_id
    JOIN {table[Plan]} p ON p.id = w.plan_id
    WHERE c.id = %(connection)s AND c.revoked_at IS NULL
      AND EXISTS ({seat})
), metered AS (
    INSERT INTO {table[Usage]} AS u (workspace_id, period, kind, count)
    SELECT live.workspace, %(period)s, %(kind)s, CASE WHEN live.cap < 1 THEN 0 ELSE 1 END FROM live
    WHERE NOT live.suspended
    ON CONFLICT (workspace_id, period, kind) DO UPDATE SET count = u.count + 1
    WHERE (SELECT cap FROM live) IS NULL OR u.count + 1 <= (SELECT cap FROM live)
    RETURNING u.count
)
SELECT live.*, EXISTS (SELECT 1 FROM metered WHERE count > 0) AS admitted,
    COALESCE((SELECT u.count FROM {table[Usage]} u WHERE {month}), 0) AS used
FROM live
"""  # noqa: S608


STATEMENT = _statement()


def _instances(row: tuple[Any, ...]) -> AgentConnection:
    """The connection of a gate row, with its workspace and plan loaded, as connection_live gives it."""
    built: list[Any] = []
    start = 0
    for model in MODELS:
        fields = _fields(model)
        values = row[start : start + len(fields)]
        built.append(model.from_db("default", [f.attname for f in fields], values))
        start += len(fields)
    connection, workspace, plan = built
    workspace.plan = plan
    connection.workspace = workspace
    return connection  # type: ignore[no-any-return]


def refusal(connection: AgentConnection, *, admitted: bool, used: int, now: Any) -> WeftError | None:
    """What the ORM path would refuse a live connection with, in its order: suspension, then the cap."""
    try:
        require_active_workspace(connection.workspace)
    except WeftError as error:
        return error
    if not admitted:
        return usage_refusal(workspace=connection.workspace, kind=KIND, used=used, now=now)
    return None


async def admit(connection_id: int | None) -> AgentConnection:
    """The caller's live connection, its call counted; WeftError (unauthenticated,
    workspace_suspended, plan_limit_reached) otherwise. One round trip on the pool."""
    if connection_id is None:
        raise unauthenticated()
    now = timezone.now()
    params = {"connection": connection_id, "period": month_start(now.date()), "kind": KIND}
    row = await fetch_one(STATEMENT, params)
    if row is None:
        raise unauthenticated()
    *fields, _suspended, _cap, _workspace, admitted, used = row
    connection = _instances(tuple(fields))
    error = refusal(connection, admitted=admitted, used=used, now=now)
    if error is not None:
        raise error
    return connection


async def fetch_one(sql: str, params: dict[str, Any]) -> tuple[Any, ...] | None:
    """One statement on the gate's pool, its first row.

    No health check before each statement (it would be a second round trip): a connection a
    database restart broke while idle fails its statement instead; then the pool's idle
    connections are checked and the statement runs once more on a live one. A second failure
    is the caller's (`unavailable`).
    """
    pool = await _open_pool()
    try:
        return await _fetch_on(pool, sql, params)
    except _Broken:
        await pool.check()
    try:
        return await _fetch_on(pool, sql, params)
    except _Broken as again:
        raise again.error from None


class _Broken(Exception):
    """The statement failed because its pooled connection is broken (a restart, a dropped socket)."""

    def __init__(self, error: psycopg.OperationalError) -> None:
        super().__init__(str(error))
        self.error = error


async def _fetch_on(pool: AsyncConnectionPool, sql: str, params: dict[str, Any]) -> tuple[Any, ...] | None:
    async with pool.connection() as conn:
        try:
            cursor = await conn.execute(sql, params)
        except psycopg.OperationalError as exc:
            if conn.broken:
                raise _Broken(exc) from exc
            raise
        return await cursor.fetchone()


class _Pools:
    """The pool of the running event loop (a test process runs several loops one after another)."""

    pool: AsyncConnectionPool | None = None
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


async def _open_pool() -> AsyncConnectionPool:
    loop = asyncio.get_running_loop()
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
                min_size=config.get("min_size", 1),
                max_size=config.get("max_size", 4),
                timeout=config.get("timeout", 10),
                open=False,
                name="weft-mcp-gate",
            )
            await pool.open()
            _Pools.pool = pool
        return _Pools.pool


async def close_pool() -> None:
    """Close this loop's pool (the ASGI lifespan's shutdown); the next call opens a new one."""
    pool, loop = _Pools.pool, _Pools.loop
    _Pools.pool = None
    if pool is not None and loop is asyncio.get_running_loop():
        await pool.close()
