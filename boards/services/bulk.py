"""A person's bulk action on tasks of the list view: move, trash or set priority, all or none.

One transaction for the whole request, and the same writes (and so the same events) as the
single move, trash and edit: one event per task. A request naming a task that cannot take the
action is refused as a whole before anything changes: a foreign or missing id answers like a
missing task (not_found), a task held by an agent's live run or in the trash is a conflict.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from accounts.models import User, Workspace
from boards import clock, queries
from boards.access import access_task
from boards.models import BOARD_COLUMNS, Priority, Run, Task
from boards.services.board import MOVABLE_COLUMNS, task_move, task_update
from boards.services.trash import task_trash
from weft.errors import WeftError, invalid_argument
from weft.hints import fix

# How many tasks one bulk request takes (docs/limits.md).
BULK_TASKS = 200
BULK_ACTIONS = ("move", "trash", "priority")


@dataclass(frozen=True)
class BulkResult:
    action: str
    tasks: list[Task]

    @property
    def count(self) -> int:
        return len(self.tasks)


def _checked_ids(task_ids: Iterable[Any]) -> list[Any]:
    ids = list(dict.fromkeys(str(ident).strip() for ident in task_ids))
    if not ids:
        raise invalid_argument("ids", "choose at least one task")
    if len(ids) > BULK_TASKS:
        raise invalid_argument("ids", f"at most {BULK_TASKS} tasks at once; {len(ids)} were chosen")
    return ids


def _checked_action(action: str, column: str | None, priority: Any) -> None:
    if action not in BULK_ACTIONS:
        raise invalid_argument("action", f"one of {', '.join(BULK_ACTIONS)}")
    if action == "move" and column not in MOVABLE_COLUMNS:
        raise invalid_argument(
            "column", f"one of {', '.join(MOVABLE_COLUMNS)}; a task enters Doing only when claimed"
        )
    if action == "priority" and (isinstance(priority, bool) or priority not in Priority.values):
        raise invalid_argument("priority", f"one of {sorted(Priority.values)}")


def _refuse_unmovable(tasks: list[Task]) -> None:
    """A task an agent holds, or one in the trash, refuses the whole request."""
    now = clock.db_now()
    held = sorted(
        Run.objects.filter(queries.held(now), task__in=tasks).values_list("task_id", flat=True).distinct()
    )
    if held:
        raise _conflict(held, "an agent's live run holds them; wait for the run to end or release it")
    off_board = sorted(task.pk for task in tasks if task.column not in BOARD_COLUMNS)
    if off_board:
        raise _conflict(off_board, "they are not on the board (in the trash or dropped)")


def _conflict(ids: list[int], why: str) -> WeftError:
    named = ", ".join(f"#{pk}" for pk in ids)
    return WeftError(
        "conflict",
        f"nothing changed: {named} cannot take this action because {why}",
        details={"taskIds": ids},
        fix=fix("get_board_state"),
    )


def _apply(task: Task, action: str, column: str | None, priority: Any, by_user: User) -> Task:
    if action == "move":
        assert column is not None
        return task_move(task=task, column=column, by_user=by_user).task
    if action == "trash":
        return task_trash(task=task, by_user=by_user).task
    return task_update(task=task, by_user=by_user, priority=priority).task


def tasks_bulk(
    *,
    workspace: Workspace,
    task_ids: Iterable[Any],
    action: str,
    by_user: User,
    column: str | None = None,
    priority: int | None = None,
) -> BulkResult:
    """Move, trash or set the priority of up to BULK_TASKS tasks of the workspace, all or none."""
    ids = _checked_ids(task_ids)
    _checked_action(action, column, priority)
    with transaction.atomic():
        found = [access_task(workspace, ident) for ident in ids]
        locked = list(Task.objects.select_for_update().filter(pk__in=[t.pk for t in found]).order_by("pk"))
        _refuse_unmovable(locked)
        done = [_apply(task, action, column, priority, by_user) for task in found]
    return BulkResult(action=action, tasks=done)
