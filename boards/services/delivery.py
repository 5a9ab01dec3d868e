"""Handing answers and approvals to the agent that asked, exactly once.

A connection receives an answered question (and an approval of a step) on its next start_task of
the task or get_my_work, whichever comes first. Both callers lock the rows they deliver (SKIP
LOCKED where the database has it; SQLite serialises writers), and `mark_delivered` is a checked
compare-and-set on `delivered_at`: only the caller whose update changed the row emits the
`*.delivered` event and hands the row over, however many calls of the connection race.
"""

from __future__ import annotations

from datetime import datetime

from django.db import connection as db_connection
from django.db.models import Model, QuerySet

from accounts.models import AgentConnection
from boards.models import Approval, Question, QuestionState, Task
from weft.events import emit


def locked[M: Model](rows: QuerySet[M]) -> QuerySet[M]:
    """The rows to hand over, locked: their own rows only (never the task or run they join), and
    skipping rows another caller holds, where the database can (PostgreSQL). A skipped row stays
    undelivered for the caller that holds it; nobody waits behind a claim that holds the task."""
    skip_locked = db_connection.features.has_select_for_update_skip_locked
    return rows.select_for_update(skip_locked=skip_locked, of=("self",))


def mark_delivered(row: Question | Approval, now: datetime) -> bool:
    """Mark an answer or approval handed over; True only for the one caller whose update changed it.

    The compare-and-set is what makes "exactly once" hold where no lock was taken (SQLite, a
    caller holding a stale read, or task_claim, which reads its approval without a lock).
    """
    kind = "question" if isinstance(row, Question) else "approval"
    if not type(row).objects.filter(pk=row.pk, delivered_at=None).update(delivered_at=now):
        return False
    row.delivered_at = now
    emit(
        workspace_id=row.workspace_id,
        type=f"{kind}.delivered",
        entity_type=kind,
        entity_id=row.pk,
        payload={f"{kind}Id": row.pk, "taskId": row.task_id},
    )
    return True


def deliver_answers(
    *, connection: AgentConnection | None, now: datetime, task: Task | None = None
) -> list[Question]:
    """Answered questions of this connection (on `task`, if given) not yet handed over: delivered now."""
    if connection is None:
        return []
    pending = locked(pending_answers(connection))
    if task is not None:
        pending = pending.filter(task=task)
    return [question for question in pending.order_by("answered_at", "pk") if mark_delivered(question, now)]


def pending_answers(connection: AgentConnection) -> QuerySet[Question]:
    """This connection's answered questions not yet handed over (unlocked: a read)."""
    return Question.objects.select_related("task__board", "run").filter(
        connection=connection, state=QuestionState.ANSWERED, delivered_at=None
    )


def valid_approvals(connection: AgentConnection, now: datetime) -> QuerySet[Approval]:
    """This connection's unused, unexpired approvals, oldest first (unlocked: a read); those of an
    archived board's tasks wait, undelivered, until the board is restored."""
    return Approval.objects.filter(
        connection=connection, used_at=None, expires_at__gt=now, task__board__archived_at=None
    ).order_by("created_at", "pk")


def valid_approval(*, task: Task, connection: AgentConnection | None, now: datetime) -> Approval | None:
    """The newest unused, unexpired approval of a step of `task` for this connection."""
    if connection is None:
        return None
    return (
        Approval.objects.filter(task=task, connection=connection, used_at=None, expires_at__gt=now)
        .order_by("-created_at")
        .first()
    )


def deliver_approvals(*, connection: AgentConnection, now: datetime) -> tuple[list[Approval], list[Approval]]:
    """This connection's valid, unused approvals (locked), and those of them handed over now.

    An approval is delivered (listed) once, but stays valid, and the next thing to do, until used.
    """
    valid = list(locked(valid_approvals(connection, now)))
    return valid, [a for a in valid if a.delivered_at is None and mark_delivered(a, now)]
