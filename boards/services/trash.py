"""Writes on the trash: a task in, back out within 30 days, and purged after."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction

from accounts.models import User
from boards import clock
from boards.models import Column, Task
from boards.payloads import task_payload
from boards.results import TaskResult
from boards.services.board import MOVABLE_COLUMNS, close_reviews, end_live_run, locked_task, task_hint
from weft.errors import invalid_argument
from weft.events import emit
from weft.hints import DONE

TRASH_RETENTION = timedelta(days=30)


def task_trash(*, task: Task, by_user: User) -> TaskResult:
    """Into the trash, recoverable for 30 days; a live run is released."""
    with transaction.atomic():
        now = clock.db_now()
        current = locked_task(task)
        if current.column == Column.TRASH:
            return TaskResult(task=current, action="trashed", hint=DONE)
        if end_live_run(current, now, "trashed by a person"):
            current = locked_task(task)
        close_reviews(current, now, by_user)
        current.trashed_from = current.column
        current.column = Column.TRASH
        current.trashed_at = now
        current.updated_at = now
        current.save(update_fields=["column", "trashed_from", "trashed_at", "updated_at"])
        emit(
            workspace_id=current.workspace_id,
            type="task.trashed",
            entity_type="task",
            entity_id=current.pk,
            payload={"taskId": current.pk, "from": current.trashed_from},
            epoch=current.epoch,
        )
    return TaskResult(task=current, action="trashed", hint=DONE)


def task_restore(*, task: Task, by_user: User) -> TaskResult:
    """Back from the trash to the column it left (Doing comes back as Todo)."""
    with transaction.atomic():
        now = clock.db_now()
        current = locked_task(task)
        if current.column != Column.TRASH:
            raise invalid_argument("id", f"task {current.pk} is not in the trash")
        if current.trashed_at is not None and now - current.trashed_at > TRASH_RETENTION:
            raise invalid_argument("id", f"task {current.pk} has been in the trash more than 30 days")
        back = current.trashed_from if current.trashed_from in MOVABLE_COLUMNS else Column.TODO
        current.column = back
        current.trashed_at = None
        current.trashed_from = ""
        current.updated_at = now
        current.save(update_fields=["column", "trashed_at", "trashed_from", "updated_at"])
        emit(
            workspace_id=current.workspace_id,
            type="task.restored",
            entity_type="task",
            entity_id=current.pk,
            payload={"taskId": current.pk, "to": back, "task": task_payload(current)["column"]},
            epoch=current.epoch,
        )
    return TaskResult(task=current, action="restored", hint=task_hint(current))


def trash_purge(*, now: datetime | None = None, batch: int = 500) -> int:
    """Delete tasks that have been in the trash for more than 30 days; one event per task."""
    at = now or clock.db_now()
    purged = 0
    with transaction.atomic():
        expired = list(
            Task.objects.select_for_update(skip_locked=True)
            .filter(column=Column.TRASH, trashed_at__lte=at - TRASH_RETENTION)
            .order_by("trashed_at", "pk")[:batch]
        )
        for task in expired:
            emit(
                workspace_id=task.workspace_id,
                type="task.purged",
                entity_type="task",
                entity_id=task.pk,
                payload={"taskId": task.pk, "title": task.title},
                epoch=task.epoch,
            )
            task.delete()
            purged += 1
    return purged
