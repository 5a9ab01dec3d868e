"""Labels: a workspace's labels and the labels a task carries.

A label is named once per workspace whatever its case ("Bug" and "bug" are one label) and has a
colour from a fixed palette. A task carries at most `limits.TASK_LABELS` labels of its own
workspace, named by name (task_create and task_update take `labels`); anything else is refused
before it is stored.
"""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.db.models.functions import Lower

from accounts.models import User, Workspace
from boards import clock, limits
from boards.models import Label, LabelColour, Task
from boards.services.common import within_limits
from weft.errors import WeftError, invalid_argument
from weft.hints import fix


def label_create(*, workspace: Workspace, name: str, colour: str = LabelColour.GRAY) -> Label:
    """A new label of the workspace; a name it already has (in any case) is a conflict."""
    with within_limits():
        name = limits.text("name", name, limits.LABEL_NAME, required=True)
    if colour not in LabelColour.values:
        raise invalid_argument("colour", f"one of {', '.join(LabelColour.values)}")
    try:
        with transaction.atomic():
            if Label.objects.filter(workspace=workspace, name__iexact=name).exists():
                raise IntegrityError
            return Label.objects.create(
                workspace=workspace, name=name, colour=colour, created_at=clock.db_now()
            )
    except IntegrityError:
        raise WeftError(
            "conflict",
            f"this workspace already has a label named {name!r} (names ignore case)",
            details={"field": "name", "name": name},
            fix=fix("get_board_state"),
        ) from None


def labels_named(workspace: Workspace, names: Any) -> list[Label]:
    """The workspace's labels with these names (any case), at most TASK_LABELS of them."""
    with within_limits():
        given = limits.text_list("labels", names, items=limits.TASK_LABELS, item=limits.LABEL_NAME)
    wanted = {name.lower(): name for name in given if name}
    if len(wanted) < len(given):
        raise invalid_argument("labels", "each label once, and none empty")
    mine = Label.objects.filter(workspace=workspace)
    found: list[Label] = list(mine.annotate(key=Lower("name")).filter(key__in=list(wanted)).order_by("name"))
    missing = sorted(set(wanted) - {label.name.lower() for label in found})
    if missing:
        known = ", ".join(mine.order_by("name").values_list("name", flat=True)[:20])
        raise invalid_argument(
            "labels",
            f"no label named {wanted[missing[0]]!r} in this workspace (its labels: {known or 'none yet'});"
            " a person adds labels on the task page",
        )
    return found


def names_of(labels: list[Label]) -> list[str]:
    """Label names as a task keeps them (`Task.label_names`): in name order, whatever the case."""
    return sorted((label.name for label in labels), key=str.lower)


def labels_differ(task: Task, labels: list[Label]) -> bool:
    return {label.pk for label in task.labels.all()} != {label.pk for label in labels}


def task_label_new(*, task: Task, name: str, colour: str, by_user: User | None = None) -> Label:
    """A new label of the task's workspace, put on the task: both or neither."""
    from boards.services.board import locked_task, task_update  # board.py imports this module

    with transaction.atomic():
        current = locked_task(task)
        label = label_create(workspace=task.workspace, name=name, colour=colour)
        task_update(task=current, by_user=by_user, labels=[*current.label_names, label.name])
    return label
