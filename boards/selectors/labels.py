"""Labels and assignees as the task page and the board offer them: the workspace's labels, and
the members and agent connections a task can be assigned to."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet
from django.db.models.functions import Lower

from accounts.models import AgentConnection, Seat, Workspace
from boards.models import Label, LabelColour, Task


@dataclass(frozen=True)
class AssigneeChoice:
    value: str  # "user:<id>" or "agent:<id>", as the assign form posts it
    name: str
    kind: str  # "person" or "agent"


def workspace_labels(workspace: Workspace) -> QuerySet[Label]:
    return Label.objects.filter(workspace=workspace).order_by(Lower("name"), "pk")


def assignee_choices(workspace: Workspace) -> list[AssigneeChoice]:
    """The workspace's members by display name, then its live agent connections by name."""
    seats = Seat.objects.filter(workspace=workspace).select_related("user")
    people = sorted(
        (AssigneeChoice(f"user:{s.user_id}", s.user.display_name, "person") for s in seats),
        key=lambda c: c.name.lower(),
    )
    agents = AgentConnection.objects.filter(workspace=workspace, revoked_at=None)
    agents = agents.order_by(Lower("name"), "pk")
    return people + [AssigneeChoice(f"agent:{a.pk}", a.name, "agent") for a in agents]


def task_people(workspace: Workspace, task: Task) -> dict[str, Any]:
    """What the task page shows of labels and the assignee, and offers to change."""
    current = {name.lower() for name in task.label_names}
    return {
        "label_choices": [(label, label.name.lower() in current) for label in workspace_labels(workspace)],
        "assignee_choices": assignee_choices(workspace),
        "assigned_value": (
            f"user:{task.assigned_user_id}"
            if task.assigned_user_id
            else f"agent:{task.assigned_connection_id}"
            if task.assigned_connection_id
            else ""
        ),
        "label_colours": LabelColour.choices,
    }
