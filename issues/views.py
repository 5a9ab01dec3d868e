"""The triage pages of a workspace's received issues. Thin: parse → access → service/selector → render.

Only owners and admins reach them; anyone else gets the same 404 as a missing workspace (as the
webhook pages). Every object a form names (an issue, a board, a duplicate's original) goes
through the workspace's access helpers first, so a foreign id answers like a missing one.
"""

from __future__ import annotations

from collections.abc import Callable

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from accounts.models import Seat, User
from boards.access import access_board
from hooks.views import managing_view
from issues import selectors_triage, services
from issues.access import access_issue
from issues.forms import (
    BulkCloseForm,
    DuplicateForm,
    FilterForm,
    ReplyForm,
    StatusForm,
    TaskForm,
    UpstreamForm,
)
from issues.models import Issue
from issues.services import tasks
from weft.errors import WeftError

# A write that returns what the page tells the person once it is done.
Write = Callable[[], str]


def _user(request: HttpRequest) -> User:
    return request.user  # type: ignore[return-value]  # managing_view: signed in, with a seat


def _form_errors(form: forms.Form) -> str:
    return " ".join(f"{name}: {' '.join(str(e) for e in errors)}" for name, errors in form.errors.items())


def _to_issue(seat: Seat, issue: Issue) -> HttpResponseRedirect:
    return redirect("issues:issue", slug=seat.workspace.slug, issue_id=issue.pk)


def _done(request: HttpRequest, seat: Seat, issue: Issue, form: forms.Form, write: Write) -> HttpResponse:
    """Run `write` if the form is valid; its refusal or the form's errors come back as a message."""
    if not form.is_valid():
        messages.error(request, _form_errors(form))
        return _to_issue(seat, issue)
    try:
        text = write()
    except WeftError as error:
        if error.code == "not_found":
            raise
        messages.error(request, error.message)
        return _to_issue(seat, issue)
    messages.success(request, text)
    return _to_issue(seat, issue)


@managing_view
@require_GET
def issue_list(request: HttpRequest, seat: Seat) -> HttpResponse:
    filter_form = FilterForm(request.GET)
    listing = selectors_triage.issues_for_triage(workspace=seat.workspace, filters=filter_form.filters())
    context = {"seat": seat, "workspace": seat.workspace, "filter_form": filter_form, "issues": listing}
    return render(request, "issues/list.html", context)


@managing_view
@require_POST
def issues_close(request: HttpRequest, seat: Seat) -> HttpResponse:
    form = BulkCloseForm(request.POST)
    ids = form.cleaned_data["issue"] if form.is_valid() else []
    if not ids:
        messages.error(request, "Choose the issues to close.")
        return redirect("issues:list", slug=seat.workspace.slug)
    closed = tasks.issues_close(workspace=seat.workspace, issue_ids=ids)
    messages.success(request, f"{len(closed)} closed.")
    return redirect("issues:list", slug=seat.workspace.slug)


@managing_view
@require_GET
def issue(request: HttpRequest, seat: Seat, issue_id: int) -> HttpResponse:
    page = selectors_triage.triage_page(workspace=seat.workspace, issue_id=issue_id)
    context = {
        "seat": seat,
        "workspace": seat.workspace,
        "page": page,
        "issue": page.issue,
        "reply_form": ReplyForm(),
        "status_form": StatusForm(initial={"status": page.issue.status}),
        "duplicate_form": DuplicateForm(),
        "upstream_form": UpstreamForm(initial={"url": page.issue.upstream_url}),
        "task_form": TaskForm(),
    }
    return render(request, "issues/issue.html", context)


@managing_view
@require_POST
def issue_reply(request: HttpRequest, seat: Seat, issue_id: int) -> HttpResponse:
    found = access_issue(seat.workspace, issue_id)
    form = ReplyForm(request.POST)

    def write() -> str:
        body, user = form.cleaned_data["body"], _user(request)
        if form.cleaned_data["ask"]:
            tasks.issue_ask_for_detail(issue=found, user=user, body=body)
            return "Asked for detail; the issue waits for the reporter's answer."
        services.issue_reply(issue=found, user=user, body=body)
        return "Reply sent; the reporter reads it on its next look."

    return _done(request, seat, found, form, write)


@managing_view
@require_POST
def issue_status(request: HttpRequest, seat: Seat, issue_id: int) -> HttpResponse:
    found = access_issue(seat.workspace, issue_id)
    form = StatusForm(request.POST)

    def write() -> str:
        status, resolution = form.cleaned_data["status"], form.cleaned_data["resolution"]
        changed = services.issue_set_status(issue=found, status=status, resolution=resolution or None)
        return f"Status: {changed.get_status_display()}."

    return _done(request, seat, found, form, write)


@managing_view
@require_POST
def issue_duplicate(request: HttpRequest, seat: Seat, issue_id: int) -> HttpResponse:
    found = access_issue(seat.workspace, issue_id)
    form = DuplicateForm(request.POST)
    of = access_issue(seat.workspace, form.data.get("of", ""))

    def write() -> str:
        services.issue_mark_duplicate(issue=found, of=of)
        return f"Marked as a duplicate of #{of.pk}."

    return _done(request, seat, found, form, write)


@managing_view
@require_POST
def issue_upstream(request: HttpRequest, seat: Seat, issue_id: int) -> HttpResponse:
    found = access_issue(seat.workspace, issue_id)
    form = UpstreamForm(request.POST)

    def write() -> str:
        services.issue_set_upstream(issue=found, url=form.cleaned_data["url"])
        return "Upstream link saved."

    return _done(request, seat, found, form, write)


@managing_view
@require_POST
def issue_task(request: HttpRequest, seat: Seat, issue_id: int) -> HttpResponse:
    found = access_issue(seat.workspace, issue_id)
    form = TaskForm(request.POST)
    board = access_board(seat.workspace, form.data.get("board", ""))

    def write() -> str:
        made = tasks.issue_task_make(
            issue=found, board=board, user=_user(request), title=form.cleaned_data["title"]
        )
        return f"Task #{made.task.pk} is on {board.name}; accepting it in the Inbox resolves this issue."

    return _done(request, seat, found, form, write)
