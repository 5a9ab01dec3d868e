"""Writes that shape the board: the default board, and task create / update / move / edit."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import Max

from accounts.access import require_active_workspace
from accounts.models import AgentConnection, Usage, User, Workspace
from accounts.services import usage_consume
from boards import clock, lease, limits
from boards.models import (
    Board,
    Column,
    Decision,
    InboxItem,
    InboxKind,
    InboxState,
    Label,
    Priority,
    Run,
    RunState,
    Task,
)
from boards.results import TaskResult
from boards.services.common import forbidden, release_task_row, within_limits
from boards.services.labels import labels_differ, labels_named, names_of
from weft.errors import WeftError, invalid_argument
from weft.events import emit
from weft.hints import DONE, Hint, fix, next_

# Where people may put a task by hand; Doing is reached only by a claim.
MOVABLE_COLUMNS = (Column.BACKLOG, Column.TODO, Column.DONE, Column.DROPPED)
CREATE_COLUMNS = (Column.BACKLOG, Column.TODO, Column.DONE)
# Where an agent may put a task: deciding a review, dropping and finishing by hand are a person's.
AGENT_COLUMNS = (Column.BACKLOG, Column.TODO)
EDITABLE_FIELDS = (
    "title",
    "description",
    "priority",
    "due_at",
    "review_required",
    "estimated_review_minutes",
    "checks",
)


def board_default(*, workspace: Workspace) -> Board:
    """The workspace's first live board, created on demand."""
    board = Board.objects.filter(workspace=workspace, archived_at__isnull=True).order_by("pk").first()
    if board is None:
        board = Board.objects.create(workspace=workspace, name="Board")
    return board


def task_hint(task: Task) -> Hint:
    """What to do with a task in its column (one state → one hint)."""
    if task.column == Column.TODO:
        return next_("start_task", {"id": task.pk})
    if task.column in (Column.BACKLOG, Column.DOING):
        return next_("get_task", {"id": task.pk})
    return DONE


def _clean(field: str, value: Any) -> Any:
    """Validate one editable field to its documented limit; invalid_argument names the field."""
    with within_limits():
        return _checked(field, value)


def _checked(field: str, value: Any) -> Any:
    if field == "title":
        return limits.text("title", value, limits.TITLE, required=True)
    if field == "description":
        return limits.text("description", value, limits.DESCRIPTION, strip=False)
    if field == "priority":
        if isinstance(value, bool) or value not in Priority.values:
            raise limits.LimitError("priority", f"one of {sorted(Priority.values)}", problem="range")
        return int(value)
    if field == "due_at":
        return limits.due("dueAt", value)
    if field == "review_required":
        return bool(value)
    if field == "estimated_review_minutes":
        return limits.review_minutes("estimatedReviewMinutes", value)
    if field == "checks":
        if not isinstance(value, list):
            raise limits.LimitError("checks", "a list of checks", problem="type")
        limits.at_most("checks", value, limits.CHECKS)
        limits.without_nul_anywhere("checks", value)
        if any(len(json.dumps(c)) > limits.CHECK_JSON for c in value):
            raise limits.LimitError("checks", f"each check is JSON of at most {limits.CHECK_JSON} characters")
        return value
    raise limits.LimitError(field, "not a task field that can be changed here")


def _next_position(board_id: int, column: str) -> float:
    top = Task.objects.filter(board_id=board_id, column=column).aggregate(m=Max("position"))["m"]
    return (top or 0.0) + 1.0


def _task_insert(
    *,
    workspace: Workspace,
    board: Board | None,
    column: str,
    by_user: User | None,
    by_connection: AgentConnection | None,
    values: dict[str, Any],
    labels: list[Label],
) -> Task:
    """The task row, its labels, its plan usage and its event, in one transaction."""
    with transaction.atomic():
        now = clock.db_now()
        usage_consume(workspace=workspace, kind=Usage.TASKS, now=now)
        target = board or board_default(workspace=workspace)
        task = Task.objects.create(
            workspace=workspace,
            board=target,
            column=column,
            position=_next_position(target.pk, column),
            created_by_user=by_user,
            created_by_connection=by_connection,
            created_at=now,
            updated_at=now,
            label_names=names_of(labels),
            **values,
        )
        if labels:
            task.labels.set(labels)
        emit(
            workspace_id=workspace.pk,
            type="task.created",
            entity_type="task",
            entity_id=task.pk,
            payload={"taskId": task.pk, "title": task.title, "column": task.column},
            epoch=task.epoch,
        )
    return task


def task_create(
    *,
    workspace: Workspace,
    title: str,
    board: Board | None = None,
    description: str = "",
    column: str = Column.TODO,
    priority: int = Priority.NORMAL,
    due_at: datetime | None = None,
    review_required: bool = False,
    estimated_review_minutes: int = 5,
    by_user: User | None = None,
    by_connection: AgentConnection | None = None,
    checks: list[Any] | None = None,
    labels: list[str] | None = None,
) -> TaskResult:
    """A new task (counted against the plan's monthly task cap), with labels of its workspace."""
    if by_connection is not None:
        require_active_workspace(workspace)
    allowed = AGENT_COLUMNS if by_connection is not None else CREATE_COLUMNS
    if column not in allowed:
        raise invalid_argument("column", f"a new task goes to one of {', '.join(allowed)}")
    values = {
        "title": title,
        "description": description,
        "priority": priority,
        "due_at": due_at,
        "review_required": review_required,
        "estimated_review_minutes": estimated_review_minutes,
        "checks": checks or [],
    }
    cleaned = {name: _clean(name, value) for name, value in values.items()}
    _require_board_in(workspace, board)
    task = _task_insert(
        workspace=workspace,
        board=board,
        column=column,
        by_user=by_user,
        by_connection=by_connection,
        values=cleaned,
        labels=labels_named(workspace, labels) if labels else [],
    )
    return TaskResult(task=task, action="created", hint=task_hint(task))


def _require_board_in(workspace: Workspace, board: Board | None) -> None:
    """A board of another workspace answers like a missing one."""
    if board is not None and board.workspace_id != workspace.pk:
        raise WeftError(
            "not_found",
            f"board {board.pk} does not exist in this workspace",
            details={"kind": "board", "id": str(board.pk)},
            fix=fix("get_board_state"),
        )
    if board is not None and board.archived_at is not None:
        raise invalid_argument(
            "boardId",
            f"board {board.pk} ({board.name}) is archived and takes no new tasks; a person restores it first",
            fix_hint=fix("get_board_state"),
        )


def locked_task(task: Task) -> Task:
    """The task's row, locked for the rest of the transaction (a no-op lock on SQLite, which
    serialises writers anyway)."""
    return Task.objects.select_for_update().get(pk=task.pk)


def task_update(
    *, task: Task, by_user: User | None = None, by_connection: AgentConnection | None = None, **changes: Any
) -> TaskResult:
    """Change a task's editable fields and its labels; moving between columns is task_move."""
    if by_connection is not None:
        require_active_workspace(task.workspace)
    if "column" in changes:
        raise invalid_argument("column", "move a task with task_move")
    given = changes.pop("labels", None)
    cleaned = {name: _clean(name, value) for name, value in changes.items()}
    labels = labels_named(task.workspace, given) if given is not None else None
    with transaction.atomic():
        now = clock.db_now()
        current = locked_task(task)
        changed = [name for name, value in cleaned.items() if getattr(current, name) != value]
        relabel = labels is not None and labels_differ(current, labels)
        if by_connection is not None and (changed or relabel):
            _agent_may_edit(current, {name: cleaned[name] for name in changed})
        for name in changed:
            setattr(current, name, cleaned[name])
        if relabel:
            current.labels.set(labels or [])
            current.label_names = names_of(labels or [])
            changed.append("labels")
        if changed:
            current.updated_at = now
            columns = ["label_names" if name == "labels" else name for name in changed]
            current.save(update_fields=[*columns, "updated_at"])
            payload: dict[str, Any] = {"taskId": current.pk, "fields": changed}
            if relabel:
                payload["labels"] = current.label_names
            emit(
                workspace_id=current.workspace_id,
                type="task.updated",
                entity_type="task",
                entity_id=current.pk,
                payload=payload,
                epoch=current.epoch,
            )
    return TaskResult(task=current, action="updated" if changed else "unchanged", hint=task_hint(current))


def _pending_item(task: Task) -> bool:
    """A review or question of this task waits on a person (open or snoozed)."""
    return InboxItem.objects.filter(task=task, state__in=(InboxState.OPEN, InboxState.SNOOZED)).exists()


def _agent_may_edit(task: Task, changes: dict[str, Any]) -> None:
    """An agent's edit: never while a person decides, never waiving review or cutting its estimate.

    Lowering the estimate would shrink the attention queue that admits the agent's own work.
    """
    if _pending_item(task):
        raise forbidden(
            f"task {task.pk} waits on a person in the Inbox; agents cannot change it until they decide",
            condition=f"a person decides task {task.pk}'s Inbox item",
            task=task,
        )
    if task.review_required and changes.get("review_required") is False:
        raise forbidden(
            f"only a person can switch review off for task {task.pk}",
            condition=f"a person switches review off for task {task.pk} if they want to",
            task=task,
        )
    minutes = changes.get("estimated_review_minutes")
    if minutes is not None and minutes < task.estimated_review_minutes:
        raise forbidden(
            f"only a person can lower task {task.pk}'s review estimate"
            f" ({task.estimated_review_minutes} minutes); agents may raise it",
            condition=f"a person lowers task {task.pk}'s review estimate if they want to",
            task=task,
        )


def _agent_may_move(task: Task, column: str) -> None:
    """Agents move tasks only between Backlog and Todo, and never one a person must decide."""
    if _pending_item(task):
        raise forbidden(
            f"task {task.pk} waits on a person in the Inbox; agents cannot move it until they decide",
            condition=f"a person decides task {task.pk}'s Inbox item",
            task=task,
        )
    if task.column not in AGENT_COLUMNS or column not in AGENT_COLUMNS:
        raise forbidden(
            f"agents move tasks only between backlog and todo; moving task {task.pk} from {task.column}"
            f" to {column} is a person's act (finish with complete_task, give it back with release_task)",
            condition=f"a person moves task {task.pk} to {column} if they decide to",
            task=task,
        )


def end_live_run(task: Task, now: datetime, reason: str) -> bool:
    """A person takes a task out of Doing: the live run is released and its token fenced off."""
    live = Run.objects.filter(task=task, state__in=lease.LIVE_STATES).first()
    if live is None:
        return False
    changed = Run.objects.filter(pk=live.pk, state__in=lease.LIVE_STATES).update(
        state=RunState.RELEASED, lease_token_hash="", ended_at=now, end_reason=reason
    )
    if changed:
        release_task_row(task.pk, now)
        emit(
            workspace_id=task.workspace_id,
            type="run.released",
            entity_type="run",
            entity_id=live.run_id,
            payload={"runId": str(live.run_id), "taskId": task.pk, "reason": reason},
            epoch=live.epoch + 1,
        )
    return bool(changed)


def close_reviews(task: Task, now: datetime, by_user: User | None) -> None:
    """A person who moves or trashes a task decides its waiting review by doing so.

    Without this the review would stay in the Inbox, count against attention, and a later
    Accept could move a task that has since been claimed again. Called with the task row
    locked; inbox_decide takes the same lock first, so the two cannot interleave.
    """
    waiting = list(
        InboxItem.objects.filter(
            task=task, kind=InboxKind.REVIEW, state__in=(InboxState.OPEN, InboxState.SNOOZED)
        ).values_list("pk", flat=True)
    )
    if not waiting:
        return
    InboxItem.objects.filter(pk__in=waiting).update(
        state=InboxState.DECIDED, decision=Decision.MOVED, decided_by=by_user, decided_at=now
    )
    for item_id in waiting:
        emit(
            workspace_id=task.workspace_id,
            type="inbox.item_decided",
            entity_type="inbox_item",
            entity_id=item_id,
            payload={"itemId": item_id, "decision": Decision.MOVED, "taskId": task.pk},
            epoch=task.epoch,
        )


def task_move(
    *,
    task: Task,
    column: str,
    position: float | None = None,
    by_user: User | None = None,
    by_connection: AgentConnection | None = None,
) -> TaskResult:
    """Move a task between Backlog, Todo, Done and Dropped (Doing only through task_claim)."""
    if by_connection is not None:
        require_active_workspace(task.workspace)
    if column not in MOVABLE_COLUMNS:
        raise invalid_argument(
            "column", f"one of {', '.join(MOVABLE_COLUMNS)}; a task enters Doing only when claimed"
        )
    with transaction.atomic():
        now = clock.db_now()
        current = locked_task(task)
        if current.column == Column.TRASH:
            raise invalid_argument("column", f"task {current.pk} is in the trash; restore it first")
        if by_connection is not None:
            _agent_may_move(current, column)
        if end_live_run(current, now, f"moved to {column} by a person"):
            current = locked_task(task)
        close_reviews(current, now, by_user)
        previous = current.column
        current.column = column
        current.position = position if position is not None else _next_position(current.board_id, column)
        current.updated_at = now
        current.save(update_fields=["column", "position", "updated_at"])
        emit(
            workspace_id=current.workspace_id,
            type="task.moved",
            entity_type="task",
            entity_id=current.pk,
            payload={"taskId": current.pk, "from": previous, "to": column, "position": current.position},
            epoch=current.epoch,
        )
    return TaskResult(task=current, action="moved", hint=task_hint(current))


def task_edit(
    *,
    task: Task,
    column: str | None = None,
    by_user: User | None = None,
    by_connection: AgentConnection | None = None,
    **changes: Any,
) -> TaskResult:
    """Change a task's fields and move it, in one transaction: a refused move keeps the fields too."""
    with transaction.atomic():
        result = None
        if changes or column is None:
            result = task_update(task=task, by_user=by_user, by_connection=by_connection, **changes)
        if column is not None:
            result = task_move(task=task, column=column, by_user=by_user, by_connection=by_connection)
    assert result is not None
    return result
