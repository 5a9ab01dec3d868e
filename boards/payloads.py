"""The JSON shapes of board rows that every surface shares: boards, tasks (with their label names
and assignee), runs, reports, questions, approvals and Inbox items (camelCase keys, ids as ints or
strings, datetimes ISO 8601), and who holds a run as people and agents read it.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

from boards.models import Approval, Board, InboxItem, Question, Report, Run, Task

# Who holds a run whose connection and person are both gone (deleted since).
HOLDER_GONE = "someone no longer here"


def iso(value: datetime | None) -> str | None:
    return _iso(value, value.utcoffset()) if value is not None else None


@lru_cache(maxsize=1024)
def _iso(value: datetime, offset: timedelta | None) -> str:
    """`value.isoformat()`, remembered: an answer prints the same few instants many times over (a
    claim's start, heartbeat, update and the lease's end). Aware datetimes are equal when they are
    the same instant, whatever their zone, so the offset is part of the key: each zone's text is
    its own."""
    return value.isoformat()


def holder_name(run: Run | None) -> str:
    """Who holds (or held) a run, as every surface names it: its connection, else its person."""
    if run is not None and run.connection_id is not None and run.connection is not None:
        return run.connection.name
    if run is not None and run.user_id is not None and run.user is not None:
        return run.user.display_name
    return HOLDER_GONE


def board_payload(board: Board) -> dict[str, Any]:
    return {"id": board.pk, "name": board.name, "archived": board.archived_at is not None}


def assignee_payload(task: Task) -> dict[str, Any] | None:
    """Who a person assigned the task to: a person or an agent, by id and display name."""
    if task.assigned_user_id is not None and task.assigned_user is not None:
        return {"kind": "person", "id": task.assigned_user_id, "name": task.assigned_user.display_name}
    if task.assigned_connection_id is not None and task.assigned_connection is not None:
        return {"kind": "agent", "id": task.assigned_connection_id, "name": task.assigned_connection.name}
    return None


def task_payload(task: Task) -> dict[str, Any]:
    return {
        "id": task.pk,
        "boardId": task.board_id,
        "title": task.title,
        "description": task.description,
        "column": task.column,
        "priority": task.priority,
        "position": task.position,
        "dueAt": iso(task.due_at),
        "reviewRequired": task.review_required,
        "estimatedReviewMinutes": task.estimated_review_minutes,
        "checks": task.checks,
        "epoch": task.epoch,
        "labels": list(task.label_names),
        "assignee": assignee_payload(task),
        "createdAt": iso(task.created_at),
        "updatedAt": iso(task.updated_at),
        "trashedAt": iso(task.trashed_at),
    }


def report_payload(report: Report) -> dict[str, Any]:
    return {
        "id": report.pk,
        "outcome": report.outcome,
        "artifacts": report.artifacts,
        "claims": report.claims,
        "notDone": report.not_done,
        "unknowns": report.unknowns,
        "nextStep": report.next_step,
        "notAccepted": report.not_accepted,
        "verification": report.verification,
        "verificationPassed": report.verification_passed,
        "createdAt": iso(report.created_at),
    }


def question_payload(question: Question) -> dict[str, Any]:
    return {
        "id": question.pk,
        "taskId": question.task_id,
        "runId": str(question.run.run_id) if question.run_id else None,
        "question": question.text,
        "options": question.options,
        "state": question.state,
        "answer": question.answer,
        "answeredAt": iso(question.answered_at),
        "askedAt": iso(question.created_at),
    }


def approval_payload(approval: Approval) -> dict[str, Any]:
    return {
        "id": approval.pk,
        "taskId": approval.task_id,
        "step": approval.step,
        "expiresAt": iso(approval.expires_at),
        "approvedAt": iso(approval.created_at),
    }


def inbox_item_payload(item: InboxItem, now: datetime | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": item.pk,
        "kind": item.kind,
        "taskId": item.task_id,
        "state": item.state,
        "decision": item.decision,
        "note": item.note,
        "estimatedMinutes": item.estimated_minutes,
        "snoozedUntil": iso(item.snoozed_until),
        "createdAt": iso(item.created_at),
        "decidedAt": iso(item.decided_at),
    }
    if now is not None:
        data["ageSeconds"] = max(int((now - item.created_at).total_seconds()), 0)
    return data


def run_payload(run: Run) -> dict[str, Any]:
    return {
        "runId": str(run.run_id),
        "taskId": run.task_id,
        "state": run.state,
        "epoch": run.epoch,
        "holder": holder_name(run),
        "startedAt": iso(run.started_at),
        "lastHeartbeatAt": iso(run.last_heartbeat_at),
        "leaseExpiresAt": iso(run.lease_expires_at),
        "endedAt": iso(run.ended_at),
        "endReason": run.end_reason,
        # The step a person approved that this run was started to carry out, if any.
        "approvedStep": run.approval.step if run.approval_id is not None and run.approval else None,
    }
