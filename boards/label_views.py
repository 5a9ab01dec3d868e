"""The task page's labels and assignee: set the task's labels, add a new label to the workspace
(and to the task), assign the task to a member or an agent. POST targets, each back to the task."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from boards import services
from boards.access import access_task
from boards.forms import AssignForm, LabelForm, TaskLabelsForm
from boards.models import Task
from boards.views import Seat, SeatRequest, _error, _form_errors, workspace_view
from weft.errors import WeftError


def _to_task(seat: Seat, task: Task, anchor: str = "#people") -> HttpResponse:
    response = redirect("boards:task", slug=seat.workspace.slug, task_id=task.pk)
    response["Location"] += anchor
    return response


@workspace_view
@require_POST
def task_labels(request: SeatRequest, seat: Seat, task_id: int) -> HttpResponse:
    found = access_task(seat.workspace, task_id)
    form = TaskLabelsForm(request.POST)
    form.is_valid()  # an IdListField is never invalid: the service checks every name
    try:
        result = services.task_update(task=found, by_user=request.user, labels=form.cleaned_data["label"])
    except WeftError as error:
        _error(request, error)
    else:
        names = ", ".join(result.task.label_names) or "none"
        messages.success(request, f"Labels saved: {names}.")
    return _to_task(seat, found)


@workspace_view
@require_POST
def label_create(request: SeatRequest, seat: Seat, task_id: int) -> HttpResponse:
    """A new label of the workspace, put on this task at once."""
    found = access_task(seat.workspace, task_id)
    form = LabelForm(request.POST)
    if not form.is_valid():
        messages.error(request, "The label was not added: " + _form_errors(form))
        return _to_task(seat, found)
    try:
        label = services.task_label_new(task=found, by_user=request.user, **form.cleaned_data)
    except WeftError as error:
        _error(request, error)
    else:
        messages.success(request, f"Added the label {label.name}.")
    return _to_task(seat, found)


@workspace_view
@require_POST
def task_assign(request: SeatRequest, seat: Seat, task_id: int) -> HttpResponse:
    found = access_task(seat.workspace, task_id)
    form = AssignForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Nothing was assigned: " + _form_errors(form))
        return _to_task(seat, found)
    try:
        assignee = form.cleaned_data["assignee"]
        result = services.task_assign(task=found, assignee=assignee, by_user=request.user)
    except WeftError as error:
        _error(request, error)
    else:
        who = result.task.assigned_user or result.task.assigned_connection
        name = getattr(who, "display_name", None) or getattr(who, "name", "nobody")
        messages.success(request, f"Assigned to {name}." if who else "Nobody is assigned now.")
    return _to_task(seat, found)
