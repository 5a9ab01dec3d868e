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

The pool is the event loop's own (weft.apool), autocommit: each statement is its own
transaction, as the ORM path's two were.

The gate rides on a tool's statement. A tool whose common case is one statement on the pool
(start_task's claim, complete_task's completion) does not wait for the gate first: `Riding`
puts the gate's `WITH` in front of that statement (`carrying`), its `clock` made to have a row
only when the call is admitted in the connection's own workspace. Every write of those statements
reads `clock`, so a refused call changes nothing but the meter, as the gate alone would; the
answer is the gate's row and the tool's, one round trip instead of two. A tool service that does
not reach its statement (an argument it refuses first, a state it leaves to the ORM) has the gate
run on its own before anything else is answered (`server._gated`), so every answer keeps the
gate's order. tests/mcp/test_gate_rides.py runs every check through the riding gate as well.
"""

from __future__ import annotations

from datetime import datetime
from functools import cache
from typing import Any, Literal

import psycopg
from django.db import models
from django.utils import timezone

from accounts import meter
from accounts.access import require_active_workspace
from accounts.models import AgentConnection, Plan, Seat, Usage, Workspace, month_start
from accounts.services.workspaces import usage_refusal
from weft.apool import _open_pool, _Pools, close_pool, conninfo, ctes_of, enabled, fetch_one
from weft.errors import WeftError
from weft.events import attach, instance_from_row
from weft.hints import wait

KIND = Usage.AGENT_CALLS
MODELS: tuple[type[models.Model], ...] = (AgentConnection, Workspace, Plan)
# The pool is weft.apool's, shared with the one-statement claim and completion; its names stay
# importable from here.
__all__ = [
    "Riding", "_Pools", "_open_pool", "admit", "close_pool", "conninfo", "enabled", "fetch_one", "refusal",
]  # fmt: skip


def unauthenticated() -> WeftError:
    return WeftError(
        "unauthenticated",
        "this call carries no signed-in agent connection",
        fix=wait("the person signs the agent in to Weft again", "get_my_work"),
    )


def _fields(model: type[models.Model]) -> list[models.Field[Any, Any]]:
    return list(model._meta.concrete_fields)


def _live() -> str:
    """The gate's `live` CTE: the caller's live connection, its workspace and plan (%(connection)s)."""
    aliases = ("c", "w", "p")
    columns = ", ".join(
        f'{alias}."{field.column}" AS {alias}{i}'
        for alias, model in zip(aliases, MODELS, strict=True)
        for i, field in enumerate(_fields(model))
    )
    tables: tuple[type[models.Model], ...] = (*MODELS, Seat)
    table = {model: model._meta.db_table for model in tables}
    cap = Plan._meta.get_field("monthly_agent_call_cap").column
    seat = f"SELECT 1 FROM {table[Seat]} s WHERE s.workspace_id = c.workspace_id AND s.user_id = c.user_id"  # noqa: S608
    # Table and column names from the models' meta; every value is a parameter.
    return f"""
live AS (
    SELECT {columns}, w.is_suspended AS suspended, p."{cap}" AS cap, w.id AS workspace
    FROM {table[AgentConnection]} c
    JOIN {table[Workspace]} w ON w.id = c.workspace_id
    JOIN {table[Plan]} p ON p.id = w.plan_id
    WHERE c.id = %(connection)s AND c.revoked_at IS NULL
      AND EXISTS ({seat})
)"""  # noqa: S608


LIVE = _live()
# The gate's CTEs, `live` and `metered`: %(connection)s, %(period)s, %(kind)s. The meter is
# accounts.meter's (as `usage_consume`: a suspended workspace meters nothing, a cap of 0 creates
# the month's row at 0 and refuses). `used` is the count before this statement.
CTES = f"{LIVE}, {meter.METERED}"
# The gate's row: the connection's, workspace's and plan's columns, then these five.
ADMISSION = f"SELECT live.*, {meter.ADMITTED} AS admitted, {meter.USED} AS used FROM live"  # noqa: S608
# The gate as one statement → one row, or none if the connection is not live.
STATEMENT = f"WITH {CTES} {ADMISSION}"
WIDTH = sum(len(_fields(model)) for model in MODELS) + 5


def _instances(row: tuple[Any, ...]) -> AgentConnection:
    """The connection of a gate row, with its workspace and plan loaded, as connection_live gives it."""
    built: list[Any] = []
    start = 0
    for model in MODELS:
        built.append(instance_from_row(model, row[start:]))
        start += len(model._meta.concrete_fields)
    connection, workspace, plan = built
    attach(workspace, "plan", plan)
    attach(connection, "workspace", workspace)
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
    return _admitted(await fetch_one(STATEMENT, _params(connection_id, now)), now)


def _params(connection_id: int, now: datetime) -> dict[str, Any]:
    return {"connection": connection_id, "period": month_start(now.date()), "kind": KIND}


def _admitted(row: tuple[Any, ...] | None, now: datetime) -> AgentConnection:
    """The connection of the gate's row, or the WeftError of its refusal."""
    if row is None:
        raise unauthenticated()
    *fields, _suspended, _cap, _workspace, admitted, used = row
    connection = _instances(tuple(fields))
    error = refusal(connection, admitted=admitted, used=used, now=now)
    if error is not None:
        raise error
    return connection


# What fails a statement that counts the call itself as a whole, so that the caller runs the call
# as before: the meter's check (accounts.meter.CHECKED: other calls took the room it counted on),
# and, in startNext's claim, the unique live-run index or a deadlock with a concurrent completion
# of the same run (which locks the usage row first) — the completion must not fail for its claim.
_UNDONE = (psycopg.errors.DivisionByZero, psycopg.errors.UniqueViolation, psycopg.errors.DeadlockDetected)


class Riding:
    """The gate of one call, riding on the first statement the tool sends through
    `apool.fetch_action` (see above); `admit()` answers as `admit(connection_id)` would.

    `given` is the connection the tool was handed, its id and workspace id only: once a statement
    has admitted the call, it holds everything `admit` loads (workspace and plan), so the tool can
    read them after its first statement (startNext's claim reads the plan's cap)."""

    def __init__(self, given: AgentConnection) -> None:
        self.given = given
        self.connection_id: int = given.pk
        self.now = timezone.now()
        self.carried = False
        self.row: tuple[Any, ...] | None = None
        self.admitted: AgentConnection | None = None
        self.refused: WeftError | None = None

    async def carry(self, sql: str, params: dict[str, Any], final: str) -> tuple[Any, ...] | None:
        """The tool's statement with the gate in front: the tool's row, or None (nothing changed)."""
        self.carried = True
        row = await fetch_one(carrying(sql, final), self._with_gate(params))
        return self._answer(row, WIDTH)

    async def carry_counted(
        self, sql: str, params: dict[str, Any], final: str
    ) -> tuple[Any, ...] | Literal[False] | None:
        """`carry` for a statement that counts the call itself (`carrying_counted`). False when
        the month had no usage row yet, or the statement failed as a whole (`_UNDONE`): nothing
        changed, and the gate is still to run."""
        try:
            row = await fetch_one(carrying_counted(sql, final), self._with_gate(params))
        except _UNDONE:
            return False
        if row is not None and not row[WIDTH]:
            return False
        self.carried = True
        return self._answer(row[:-1] if row is not None else None, WIDTH + 1)

    def _with_gate(self, params: dict[str, Any]) -> dict[str, Any]:
        gate = _params(self.connection_id, self.now)
        assert not gate.keys() & params.keys(), "the gate's parameters and the tool's must differ"
        return {**params, **gate}

    def _answer(self, row: tuple[Any, ...] | None, at: int) -> tuple[Any, ...] | None:
        """The gate's part of a carried statement's row taken; the tool's part (from `at`), or None."""
        if row is None:
            return None  # not live: `admit` answers unauthenticated
        self.row = row[:WIDTH]
        try:
            self.admitted = _admitted(self.row, self.now)
        except WeftError as error:
            self.refused = error
        else:
            self.given.__dict__.update(self.admitted.__dict__)
        return row[at:] if row[at] is not None else None

    async def admit(self) -> AgentConnection:
        if not self.carried:
            return await admit(self.connection_id)
        if self.admitted is not None:
            return self.admitted
        raise self.refused if self.refused is not None else unauthenticated()


@cache
def carrying(sql: str, final: str) -> str:
    """`sql` (apool.CLOCK, its CTEs, then `final`, its last SELECT) with the gate in front: the gate's
    row, then the statement's row or NULLs. Its writes all read `clock`, which has a row only
    when the call is admitted in the workspace %(ws)s names."""
    return _in_front(f"{CTES}, admission AS ({ADMISSION})", sql, final)


# The admission of a statement that counts the call itself: the gate's row, then whether the
# month's usage row was there.
COUNTED_ADMISSION = (
    f"SELECT live.*, {meter.READ_ADMITTED} AS admitted, {meter.READ_USED} AS used, "  # noqa: S608
    f"{meter.READ_FOUND} AS found FROM live"
)


@cache
def carrying_counted(sql: str, final: str) -> str:
    """`carrying` for a statement that counts the call itself, its `metered` its last write
    (startNext's completion and claim, boards.services.fast_next; accounts.meter.READ): the gate's
    checks on the month's usage row as read, not counted. The gate's row, whether the month's row
    was there (without it nothing changed), the statement's row or NULLs, and last the meter's
    check (accounts.meter.CHECKED): an admitted call the upsert could not count fails the statement."""
    statement = _in_front(f"{LIVE}, {meter.READ}, admission AS ({COUNTED_ADMISSION})", sql, final)
    assert statement.endswith(_ANSWER)
    return f"{statement.removesuffix(_ANSWER)}SELECT admission.*, answer.*, {meter.CHECKED} {_ROWS}"


def _in_front(gate: str, sql: str, final: str) -> str:
    ctes = ctes_of(sql, final)
    return (
        f"WITH {' '.join(gate.split())}, "  # noqa: S608 (statements of this code)
        "clock AS (SELECT COALESCE(%(now)s::timestamptz, statement_timestamp()) AS now FROM admission "
        f"WHERE admission.admitted AND admission.workspace = %(ws)s), {ctes}, answer AS ({final}) "
        f"{_ANSWER}"
    )


_ROWS = "FROM admission LEFT JOIN answer ON true"
_ANSWER = f"SELECT admission.*, answer.* {_ROWS}"
