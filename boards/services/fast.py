"""The common claim and the common completion as one SQL statement each (PostgreSQL only).

`claim(...)` is a fresh claim of a free task with room in the attention budget; `complete(...)` a
completion that goes to Done or to the Inbox. Each is one `WITH` statement that checks the
state, writes the task, the run (and report and review item) and the event rows, and returns
the rows the answer is built from. When the state is not the common one — the task not free,
a live run (expired or not), an approval or an answer to hand over, a full Inbox, a run that is
not held, checks to run, an approved step to use up — the statement changes nothing and returns
None, and the caller runs its full ORM path, which gives every other answer and refusal.

The rules are the pure modules' (`lease`, `attention`, `queries.waiting`), their constants (the
lease duration, the limits, the states) written into the statements' text (`sql_literal`), so a
call passes only its own values; `tests/boards/test_fast_agreement.py` runs generated states
through both and shows they agree. The statement runs inside the caller's transaction, and
every event row it inserts is positioned by the relay after commit (`events.schedule_relay()`).
The lease token is HMAC(run id, epoch) under the server's key (`common.lease_token_for`): the
statement computes its hash from the HMAC pads of the derived key, since only it knows the epoch.
"""

from __future__ import annotations

import json
import uuid
from contextlib import nullcontext
from datetime import datetime, timedelta
from functools import cache
from typing import Any

import pydantic_core
from django.conf import settings
from django.db import connection as db
from django.db import transaction
from django.db.models import Model

from boards import attention, clock, lease
from boards.models import Column, InboxItem, InboxKind, InboxState, Report, Run, Task
from boards.services.common import lease_key, token_hash
from boards.services.fast_rows import CLAIM_FINAL, COMPLETE_FINAL, Completed, claimed_row, completed_from
from weft import apool
from weft.events import schedule_relay
from weft.relay_loop import relay_soon

_DATABASE_CLOCK = clock.db_now
LIVE = tuple(sorted(lease.LIVE_STATES))
# The live states written into a statement's text, not passed: with them as a parameter, a generic
# plan of the claim looked for a task's live run by reading every run of the table once the
# statistics called it small (tests/boards/test_pick_plan.py); written in, it reads an index.
LIVE_IN = "IN (" + ", ".join(f"'{state}'" for state in LIVE) + ")"
CLAIMABLE = (Column.BACKLOG, Column.TODO)


def sql_literal(value: Any) -> str:
    """A constant of the rules written into a statement's text. Only per-call values are passed as
    parameters: each one psycopg adapts again on every call, and these never change."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, timedelta):
        return f"interval '{value.total_seconds()} seconds'"
    if isinstance(value, str) and value.isidentifier():
        return f"'{value}'"
    if isinstance(value, tuple):
        return "(" + ", ".join(sql_literal(item) for item in value) + ")"
    raise ValueError(f"not a constant a statement spells out: {value!r}")


def enabled() -> bool:
    return db.vendor == "postgresql"


def _now() -> datetime | None:
    """None: the statement reads the database's clock. A test that moved the clock
    (`boards.clock.db_now` patched) has the statement use that instant instead."""
    return None if clock.db_now is _DATABASE_CLOCK else clock.db_now()


def _cols(model: type[Model], alias: str) -> str:
    return ", ".join(f"{alias}.{_name(str(f.column))}" for f in model._meta.concrete_fields)


def _name(column: str) -> str:
    """A column as the statements name it: quoted only when SQL reserves the word."""
    return f'"{column}"' if column in _RESERVED else column


_RESERVED = frozenset({"column", "order", "user", "group", "end", "default", "check", "references"})


def _one_row(sql: str, params: dict[str, Any]) -> tuple[Any, ...] | None:
    """Run one statement. On its own it is its own transaction; inside a caller's (startNext), a
    savepoint keeps a refusal by the database (the unique live-run index) from aborting it."""
    with transaction.atomic() if db.in_atomic_block else nullcontext(), db.cursor() as cursor:
        cursor.execute(sql, params)
        row: tuple[Any, ...] | None = cursor.fetchone()
    return row


@cache
def _pads(secret: str) -> tuple[bytes, bytes]:
    """HMAC-SHA256's inner and outer pads of the lease tokens' key (`lease_token_for`)."""
    key = lease_key(secret).ljust(64, b"\0")
    return bytes(b ^ 0x36 for b in key), bytes(b ^ 0x5C for b in key)


def _iso(expr: str) -> str:
    """SQL for Python's `datetime.isoformat()` of a UTC instant (microseconds only when not 0).
    Only the fraction can read '.000000': the date and time hold no dot."""
    text = f"to_char(({expr}) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US')"
    return f"replace({text}, '.000000', '') || '+00:00'"


_TOKEN_HASH = (
    "encode(sha256(convert_to(encode(sha256(%(opad)s || sha256(%(ipad)s || convert_to("
    "%(run_id)s::text || ':' || task.epoch::text, 'UTF8'))), 'hex'), 'UTF8')), 'hex')"
)

# The rules' constants as the statements spell them.
_CLAIMABLE_IN = f"IN {sql_literal(CLAIMABLE)}"
_OPEN, _SNOOZED = sql_literal(InboxState.OPEN.value), sql_literal(InboxState.SNOOZED.value)
_SOLO, _TEAM = sql_literal(attention.SOLO_LIMIT), sql_literal(attention.TEAM_LIMIT)
_MINUTES = sql_literal(attention.MINUTE_LIMIT)
_DOING, _DONE = sql_literal(Column.DOING.value), sql_literal(Column.DONE.value)
_ACTIVE, _COMPLETED = sql_literal(lease.ACTIVE), sql_literal(lease.COMPLETED)
_LEASE = sql_literal(lease.LEASE_DURATION)
_REVIEW = sql_literal(InboxKind.REVIEW.value)

# What a claim by id checks that startNext's pick already has: a live board, and no approval or
# answer of the caller's for this task (the pick requires none at all). NEXT_CLAIM_SQL leaves it out.
BY_ID_CHECKS = """
      AND EXISTS (SELECT 1 FROM boards_board b WHERE b.id = t.board_id AND b.archived_at IS NULL)
      AND NOT EXISTS (SELECT 1 FROM boards_approval p WHERE p.task_id = t.id
                      AND p.connection_id = %(conn)s AND p.used_at IS NULL AND p.expires_at > clock.now)
      AND NOT EXISTS (SELECT 1 FROM boards_question q WHERE q.task_id = t.id AND q.connection_id = %(conn)s
                      AND q.state = 'answered' AND q.delivered_at IS NULL)"""

# The task is locked SKIP LOCKED: a task another transaction holds (startNext's pick, which counts
# its call after it) is left to the ORM path, which waits for it, rather than waited for here,
# where the riding gate's count already holds the usage row — the two would wait on each other.
# The task is found by its id, the workspace checked on that row: `workspace_id + 0` is no index
# condition, so a generic plan cannot walk the workspace's tasks instead (tests/boards/test_pick_plan.py).
CLAIM_SQL = f"""
{apool.CLOCK}
attention AS (
    SELECT COUNT(i.id) AS waiting, COALESCE(SUM(i.estimated_minutes), 0) AS minutes,
           (SELECT COUNT(*) FROM accounts_seat s WHERE s.workspace_id = %(ws)s) AS people
    FROM clock LEFT JOIN boards_inboxitem i ON i.workspace_id = %(ws)s
        AND (i.state = {_OPEN} OR (i.state = {_SNOOZED} AND i.snoozed_until <= clock.now))
),
free AS (
    SELECT t.id, t.epoch FROM boards_task t, clock, attention a
    WHERE t.id = %(task)s AND t.workspace_id + 0 = %(ws)s AND t."column" {_CLAIMABLE_IN}{BY_ID_CHECKS}
      AND NOT EXISTS (SELECT 1 FROM boards_run r WHERE r.task_id = t.id AND r.state {LIVE_IN})
      AND a.waiting < CASE WHEN a.people >= 2 THEN {_TEAM} ELSE {_SOLO} END
      AND a.minutes < {_MINUTES}
    FOR UPDATE OF t SKIP LOCKED
),
task AS (
    UPDATE boards_task t SET epoch = t.epoch + 1, "column" = {_DOING}, assignee_connection_id = %(conn)s,
        assignee_user_id = NULL, updated_at = clock.now
    FROM free, clock WHERE t.id = free.id AND t.epoch = free.epoch AND t."column" {_CLAIMABLE_IN}
    RETURNING {_cols(Task, "t")}
),
run AS (
    INSERT INTO boards_run AS n (workspace_id, task_id, run_id, connection_id, user_id, lease_token_hash,
        epoch, state, started_at, last_heartbeat_at, lease_expires_at, ended_at, end_reason, approval_id)
    SELECT %(ws)s, task.id, %(run_id)s, %(conn)s, NULL, {_TOKEN_HASH}, task.epoch, {_ACTIVE},
        clock.now, clock.now, clock.now + {_LEASE}, NULL, '', NULL
    FROM task, clock
    RETURNING {_cols(Run, "n")}
),
event AS (
    INSERT INTO weft_event (workspace_id, position, type, entity_type, entity_id, payload, epoch, created_at)
    SELECT run.workspace_id, NULL, 'run.started', 'run', run.run_id::text,
        jsonb_build_object('runId', run.run_id::text, 'taskId', run.task_id,
                           'leaseExpiresAt', {_iso("run.lease_expires_at")}),
        run.epoch, clock.now
    FROM run, clock
)
{CLAIM_FINAL}
"""  # noqa: S608 (no input in the text: the columns come from the models)


def claim_params(*, workspace_id: int, task_id: int, connection_id: int, run_id: uuid.UUID) -> dict[str, Any]:
    ipad, opad = _pads(settings.SECRET_KEY)
    return {
        "now": _now(),
        "ws": workspace_id,
        "task": task_id,
        "conn": connection_id,
        "run_id": run_id,
        "ipad": ipad,
        "opad": opad,
    }


def claim(*, workspace_id: int, task_id: Any, connection_id: int) -> tuple[Task, Run] | None:
    """The fresh claim of `task_id` by an agent connection, if the state is the common one:
    the task (now Doing, epoch bumped) and its new run; None, having changed nothing, otherwise."""
    params = _claim_of(workspace_id=workspace_id, task_id=task_id, connection_id=connection_id)
    row = _one_row(CLAIM_SQL, params) if params is not None else None
    if params is None or row is None:
        return None
    schedule_relay()
    return claimed_row(row, workspace_id=workspace_id, connection_id=connection_id, run_id=params["run_id"])


async def claim_in_loop(*, workspace_id: int, task_id: Any, connection_id: int) -> tuple[Task, Run] | None:
    """`claim` from the event loop, on its own pool (weft.apool): no thread, the same statement."""
    params = _claim_of(workspace_id=workspace_id, task_id=task_id, connection_id=connection_id)
    row = await apool.fetch_action(CLAIM_SQL, params, final=CLAIM_FINAL) if params is not None else None
    if params is None or row is None:
        return None
    relay_soon()
    return claimed_row(row, workspace_id=workspace_id, connection_id=connection_id, run_id=params["run_id"])


def _claim_of(*, workspace_id: int, task_id: Any, connection_id: int) -> dict[str, Any] | None:
    """The claim statement's parameters; None for an id that names no task (the ORM path refuses it)."""
    try:
        pk = int(str(task_id).strip())  # as `access._int_id` reads an id; anything else is its refusal
    except ValueError:
        return None
    if not 0 < pk < 2**63:
        return None
    return claim_params(
        workspace_id=workspace_id, task_id=pk, connection_id=connection_id, run_id=uuid.uuid4()
    )


COMPLETE_SQL = f"""
{apool.CLOCK}
run AS (
    UPDATE boards_run r SET state = {_COMPLETED}, lease_token_hash = '', ended_at = clock.now,
        end_reason = 'completed'
    FROM boards_task t, clock
    WHERE r.run_id = %(run_id)s AND r.workspace_id + 0 = %(ws)s AND r.state {LIVE_IN}
      AND r.lease_expires_at > clock.now AND r.lease_token_hash = %(hash)s AND r.approval_id IS NULL
      AND t.id = r.task_id AND t.epoch = r.epoch AND t.checks = '[]'::jsonb
    RETURNING {_cols(Run, "r")}, (t.review_required OR %(not_accepted_any)s) AS review,
        t.estimated_review_minutes AS minutes
),
report AS (
    INSERT INTO boards_report (workspace_id, task_id, run_id, outcome, artifacts, claims, not_done, unknowns,
        next_step, not_accepted, verification, verification_passed, created_at)
    SELECT run.workspace_id, run.task_id, run.id, %(outcome)s, %(artifacts)s::jsonb, %(claims)s::jsonb,
        %(not_done)s::jsonb, %(unknowns)s::jsonb, %(next_step)s, %(not_accepted)s::jsonb,
        %(verification)s::jsonb, %(passed)s, clock.now
    FROM run, clock
    RETURNING {_cols(Report, "boards_report")}
),
task AS (
    UPDATE boards_task t SET "column" = CASE WHEN run.review THEN {_DOING} ELSE {_DONE} END,
        assignee_connection_id = NULL, assignee_user_id = NULL, updated_at = clock.now
    FROM run, clock WHERE t.id = run.task_id
    RETURNING {_cols(Task, "t")}
),
item AS (
    INSERT INTO boards_inboxitem (workspace_id, kind, task_id, run_id, report_id, question_id, state,
        decision, note, estimated_minutes, snoozed_until, decided_by_id, decided_at, reminded_at, created_at)
    SELECT run.workspace_id, {_REVIEW}, run.task_id, run.id, report.id, NULL,
        {_OPEN}, '', '', run.minutes,
        NULL, NULL, NULL, NULL, clock.now
    FROM run, report, clock WHERE run.review
    RETURNING {_cols(InboxItem, "boards_inboxitem")}
),
event AS (
    INSERT INTO weft_event (workspace_id, position, type, entity_type, entity_id, payload, epoch, created_at)
    SELECT e.workspace_id, NULL, e.type, e.entity_type, e.entity_id, e.payload, e.epoch, clock.now
    FROM (
        SELECT 1 AS ord, run.workspace_id, 'run.completed' AS type, 'run' AS entity_type,
            run.run_id::text AS entity_id, run.epoch,
            jsonb_build_object('runId', run.run_id::text, 'taskId', run.task_id, 'review', run.review,
                               'reportId', report.id) AS payload
        FROM run, report
        UNION ALL
        SELECT 2, item.workspace_id, 'inbox.item_created', 'inbox_item', item.id::text, NULL,
            jsonb_build_object('itemId', item.id, 'kind', item.kind, 'taskId', item.task_id)
        FROM item
    ) e, clock
    ORDER BY e.ord
)
{COMPLETE_FINAL}
"""  # noqa: S608 (as CLAIM_SQL)


# Sent as one line each: psycopg remembers how it read a statement's placeholders only for a
# statement under 4 KB, and the completion's layout alone took it over (no literal holds a space run).
def one_line(sql: str) -> str:
    return " ".join(sql.split())


CLAIM_SQL, COMPLETE_SQL = one_line(CLAIM_SQL), one_line(COMPLETE_SQL)


def json_text(value: Any) -> str:
    """A report's list as JSON text for its jsonb parameter: pydantic-core's encoder, which writes
    the same value as `json.dumps` (non-ASCII unescaped, no spaces: jsonb keeps neither) several
    times faster; `json.dumps` for what it cannot encode (a lone surrogate), which PostgreSQL
    then refuses as before."""
    try:
        return pydantic_core.to_json(value).decode()
    except pydantic_core.PydanticSerializationError:
        return json.dumps(value)


def _complete_params(
    *,
    workspace_id: int,
    run_id: uuid.UUID,
    lease_token: str,
    outcome: str,
    next_step: str,
    lists: dict[str, Any],
) -> dict[str, Any]:
    not_accepted = lists["not_accepted"]
    return {
        "now": _now(),
        "ws": workspace_id,
        "run_id": run_id,
        "hash": token_hash(lease_token or ""),
        "not_accepted_any": bool(not_accepted),
        "outcome": outcome,
        "next_step": next_step,
        **{name: json_text(lists[name]) for name in ("artifacts", "claims", "not_done", "unknowns")},
        "not_accepted": json_text(not_accepted),
        "verification": json_text(lists["verification"]),
        "passed": lists["passed"],
    }


def complete(
    *, workspace_id: int, run_id: Any, lease_token: str, outcome: str, next_step: str, lists: dict[str, Any]
) -> Completed | None:
    """The completion of a held run of a task without checks or an approved step: the run
    completed, its report, the task (Done, or Doing with a review item); None, having changed
    nothing, otherwise. `lists` holds the report's evidence lists, `not_accepted`, and what the
    verification of a task without checks gives (`verification`, `passed`: never False)."""
    params = completion_of(workspace_id, run_id, lease_token, outcome, next_step, lists)
    row = _one_row(COMPLETE_SQL, params) if params is not None else None
    if params is None or row is None:
        return None
    schedule_relay()
    return completed_from(row, params, lists)


async def complete_in_loop(
    *, workspace_id: int, run_id: Any, lease_token: str, outcome: str, next_step: str, lists: dict[str, Any]
) -> Completed | None:
    """`complete` from the event loop, on its own pool (weft.apool): no thread, the same statement."""
    params = completion_of(workspace_id, run_id, lease_token, outcome, next_step, lists)
    row = await apool.fetch_action(COMPLETE_SQL, params, final=COMPLETE_FINAL) if params is not None else None
    if params is None or row is None:
        return None
    relay_soon()
    return completed_from(row, params, lists)


def completion_of(
    workspace_id: int, run_id: Any, lease_token: str, outcome: str, next_step: str, lists: dict[str, Any]
) -> dict[str, Any] | None:
    """The completion statement's parameters; None for a run id that names no run."""
    try:
        ident = uuid.UUID(str(run_id))
    except ValueError:
        return None
    return _complete_params(
        workspace_id=workspace_id,
        run_id=ident,
        lease_token=lease_token,
        outcome=outcome,
        next_step=next_step,
        lists=lists,
    )
