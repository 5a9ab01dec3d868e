"""Assignees: who a task is assigned to, a member or an agent connection of its workspace.

The assignment is a person's decision and stays through claims and releases (the holder of a
live run is a different thing: `Task.assignee_*`, set by the claim). A member or connection of
another workspace, or a revoked connection, is refused as invalid_argument and never stored.
"""

from __future__ import annotations

from django.db import transaction

from accounts.models import AgentConnection, Seat, User, Workspace
from boards import clock, limits
from boards.models import Task
from boards.payloads import assignee_payload
from boards.results import TaskResult
from boards.services.board import locked_task, task_hint
from weft.errors import invalid_argument
from weft.events import emit

# How a form names an assignee: "user:<id>", "agent:<id>", or "" for nobody.
PERSON, AGENT = "user", "agent"


def _assignee_of(workspace: Workspace, value: str) -> tuple[User | None, AgentConnection | None]:
    """The member or agent connection `value` names in this workspace; anything else is refused."""
    kind, _, ident = (value or "").partition(":")
    if not kind:
        return None, None
    reason = "a member or an agent connection of this workspace (user:<id> or agent:<id>), or empty"
    if kind not in (PERSON, AGENT) or not ident.isdigit() or int(ident) > limits.ID_MAX:
        raise invalid_argument("assignee", reason)
    if kind == PERSON:
        seat = Seat.objects.select_related("user").filter(workspace=workspace, user_id=int(ident)).first()
        if seat is None:
            raise invalid_argument("assignee", reason)
        return seat.user, None
    connection = AgentConnection.objects.filter(workspace=workspace, pk=int(ident), revoked_at=None).first()
    if connection is None:
        raise invalid_argument("assignee", reason)
    return None, connection


def task_assign(*, task: Task, assignee: str, by_user: User | None = None) -> TaskResult:
    """Assign the task to a member or an agent connection of its workspace, or to nobody ("")."""
    user, connection = _assignee_of(task.workspace, assignee)
    with transaction.atomic():
        current = locked_task(task)
        if (current.assigned_user_id, current.assigned_connection_id) == (
            getattr(user, "pk", None),
            getattr(connection, "pk", None),
        ):
            return TaskResult(task=current, action="unchanged", hint=task_hint(current))
        current.assigned_user, current.assigned_connection = user, connection
        current.updated_at = clock.db_now()
        current.save(update_fields=["assigned_user", "assigned_connection", "updated_at"])
        emit(
            workspace_id=current.workspace_id,
            type="task.updated",
            entity_type="task",
            entity_id=current.pk,
            payload={"taskId": current.pk, "fields": ["assignee"], "assignee": assignee_payload(current)},
            epoch=current.epoch,
        )
    return TaskResult(task=current, action="updated", hint=task_hint(current))
