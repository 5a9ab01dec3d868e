"""The people's pages: board, task, trash and Inbox. Thin: parse → access → service/selector → render."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST
from django_htmx.middleware import HtmxDetails

from accounts.access import access_seat
from accounts.models import Seat, User
from boards import clock, limits, selectors, services
from boards.access import access_board, access_inbox_item, access_question, access_task
from boards.forms import (
    PEOPLE_COLUMNS,
    AnswerForm,
    BoardFilterForm,
    BulkForm,
    DecideForm,
    MoveForm,
    TaskCreateForm,
    TaskForm,
)
from boards.models import BOARD_COLUMNS, Column, Decision, InboxKind
from boards.templatetags.weft_boards import UNDO_TAG
from weft.errors import WeftError

View = Callable[..., HttpResponse]


class SeatRequest(HttpRequest):
    """A request past `workspace_view`: signed in (with a seat), with django-htmx's details."""

    user: User  # type: ignore[assignment]
    htmx: HtmxDetails


DECIDED_TEXT = {
    "accept": "Accepted — the task is done.",
    "rework": "Sent back for rework with your note.",
    "later": "Snoozed — it is out of the attention count until then.",
    "drop": "Dropped — work on this task stops.",
}
QUESTION_DECIDED_TEXT = {
    **DECIDED_TEXT,
    "drop": "Question dropped — the agent no longer waits for an answer.",
}


def workspace_view(view: View) -> View:
    """Resolve the caller's seat from the URL (404 without one) and turn not_found into 404."""

    @wraps(view)
    def wrapper(request: HttpRequest, slug: str, **kwargs: Any) -> HttpResponse:
        seat = access_seat(request.user, slug)  # type: ignore[arg-type]  # login_required ran first
        try:
            return view(request, seat, **kwargs)
        except WeftError as error:
            if error.code == "not_found":
                raise Http404(error.message) from error
            raise

    return login_required(wrapper)


def _nav(seat: Seat) -> dict[str, Any]:
    return {
        "seat": seat,
        "workspace": seat.workspace,
    }


def _back(request: HttpRequest, fallback: str) -> HttpResponseRedirect:
    target = request.POST.get("next") or request.headers.get("referer") or ""
    if target and url_has_allowed_host_and_scheme(
        target, {request.get_host()}, require_https=request.is_secure()
    ):
        return redirect(target)
    return redirect(fallback)


def _board_url(seat: Seat) -> str:
    return reverse("boards:board", kwargs={"slug": seat.workspace.slug})


def _error(request: HttpRequest, error: WeftError) -> None:
    messages.error(request, error.message[:1].upper() + error.message[1:])


def _undoable(request: HttpRequest, text: str, undo_url: str) -> None:
    """A toast with an Undo button (base.html reads the action from the message's tags)."""
    messages.success(request, text, extra_tags=f"{UNDO_TAG}{undo_url}")


def _board_id(request: HttpRequest) -> str | None:
    return request.GET.get("board") or request.POST.get("board") or None


@workspace_view
@require_GET
def board(request: SeatRequest, seat: Seat) -> HttpResponse:
    current = selectors.board_for_read(seat.workspace, _board_id(request))
    form = BoardFilterForm(request.GET)
    filters, now, listing = form.filters(request.user.pk), clock.db_now(), form.listing()
    where: dict[str, Any] = {"workspace": seat.workspace, "board": current, "filters": filters, "now": now}
    draft = request.session.pop(DRAFT_KEY, None) or {}
    context = {
        **_nav(seat),
        "board": current,
        "boards": selectors.boards_of(seat.workspace),
        "labels": selectors.workspace_labels(seat.workspace),
        "listing": listing,
        "filter_form": form,
        "filter_error": "" if form.is_valid() else "Filters ignored: " + _form_errors(form),
        "filters": filters,
        "create_form": TaskCreateForm(),
        **_draft_context(draft),
        "board_columns": BOARD_COLUMNS,
        "query_keep": _query_without(request, "sort", "view"),
        "move_choices": PEOPLE_COLUMNS,
    }
    if listing:
        sort = form.list_sort()
        context |= {"rows": selectors.board_rows(**where, sort=sort), "sort": sort, "headers": sort.headers()}
        context["bulk_limit"] = services.BULK_TASKS
    else:
        context["columns"] = selectors.board_columns(**where)
    return render(request, "boards/board.html", context)


def _query_without(request: HttpRequest, *names: str) -> str:
    """The page's query string without `names`, ending in "&" when not empty (links append to it)."""
    query = request.GET.copy()
    for name in names:
        query.pop(name, None)
    encoded = query.urlencode()
    return encoded + "&" if encoded else ""


@workspace_view
@require_POST
def tasks_bulk(request: SeatRequest, seat: Seat) -> HttpResponse:
    form = BulkForm(request.POST)
    back = _board_url(seat) + "?view=list"
    if not form.is_valid():
        messages.error(request, "Nothing changed: " + _form_errors(form))
        return _back(request, back)
    data = form.cleaned_data
    try:
        result = services.tasks_bulk(
            workspace=seat.workspace,
            task_ids=data["task"],
            action=data["action"],
            column=data["column"] or None,
            priority=data["priority"],
            by_user=request.user,
        )
    except WeftError as error:
        if error.code == "not_found":
            raise
        _error(request, error)
    else:
        messages.success(request, form.done_text(result.count))
    return _back(request, back)


@workspace_view
@require_GET
def trash(request: SeatRequest, seat: Seat) -> HttpResponse:
    context = {
        **_nav(seat),
        "trashed": selectors.trashed_tasks(workspace=seat.workspace),
        "dropped": selectors.dropped_tasks(workspace=seat.workspace),
    }
    return render(request, "boards/trash.html", context)


@workspace_view
@require_POST
def task_create(request: SeatRequest, seat: Seat) -> HttpResponse:
    board_id = _board_id(request)
    current = access_board(seat.workspace, board_id) if board_id is not None else None
    form = TaskCreateForm(request.POST)
    if not form.is_valid():
        messages.error(request, "The task was not created: " + _form_errors(form))
        _keep_draft(request)
        return redirect(_board_url(seat))
    try:
        result = services.task_create(
            workspace=seat.workspace, board=current, by_user=request.user, **form.cleaned_data
        )
    except WeftError as error:
        _error(request, error)
        _keep_draft(request)
    else:
        messages.success(request, f"Created #{result.task.pk} {result.task.title}.")
    return _back(request, _board_url(seat))


# What a refused new-task form held, shown again on the next board page (nothing typed is lost).
DRAFT_KEY = "weft.task_draft"
DRAFT_FIELDS = ("title", "description", "column", "priority", "due_at", "estimated_review_minutes")


def _keep_draft(request: HttpRequest) -> None:
    draft = {name: str(request.POST.get(name, ""))[: limits.DESCRIPTION] for name in DRAFT_FIELDS}
    draft["review_required"] = "on" if request.POST.get("review_required") else ""
    request.session[DRAFT_KEY] = draft


def _draft_context(draft: dict[str, str]) -> dict[str, Any]:
    """The new-task form's values: the refused draft's, else the defaults (Todo, normal, 5 min)."""
    column, priority = draft.get("column") or "todo", draft.get("priority") or "1"
    priorities = TaskCreateForm.base_fields["priority"].choices  # type: ignore[attr-defined]
    return {
        "draft": draft,
        "draft_open": bool(draft),
        "column_options": [
            (v, label, v == column) for v, label in (("todo", "Todo"), ("backlog", "Backlog"))
        ],
        "priority_options": [(v, label, str(v) == priority) for v, label in priorities],
        "draft_minutes": draft.get("estimated_review_minutes") or "5",
    }


def _form_errors(form: Any) -> str:
    return "; ".join(
        f"{field}: {' '.join(errors)}" if field != "__all__" else " ".join(errors)
        for field, errors in form.errors.items()
    )


@workspace_view
@require_GET
def task(request: SeatRequest, seat: Seat, task_id: int) -> HttpResponse:
    found = access_task(seat.workspace, task_id)
    now = clock.db_now()
    initial = {name: getattr(found, name) for name in TaskForm.base_fields}
    context = {
        **_nav(seat),
        "task": found,
        "runs": selectors.run_timeline(task=found, now=now),
        "history": selectors.task_history(task=found),
        "comments": selectors.task_comments(task=found),
        "comment_draft": request.session.pop(COMMENT_DRAFT_KEY, ""),
        "edit_form": TaskForm(initial=initial),
        "move_choices": MoveForm.base_fields["column"].choices,  # type: ignore[attr-defined]
        # Doing and Trash are reached by a claim and by Trash, never by Move: the select then
        # shows the current column as a disabled first option.
        "stays_put": found.column not in dict(PEOPLE_COLUMNS),
        "startable": found.column in (Column.BACKLOG, Column.TODO),  # a person may press Start
        "now": now,
        **selectors.task_people(seat.workspace, found),
    }
    return render(request, "boards/task.html", context)


@workspace_view
@require_POST
def comment_add(request: SeatRequest, seat: Seat, task_id: int) -> HttpResponse:
    found = access_task(seat.workspace, task_id)
    try:
        services.comment_add(task=found, author=request.user, body=request.POST.get("body", ""))
    except WeftError as error:
        _error(request, error)
        request.session[COMMENT_DRAFT_KEY] = str(request.POST.get("body", ""))[: limits.DESCRIPTION]
    return redirect(
        reverse("boards:task", kwargs={"slug": seat.workspace.slug, "task_id": found.pk}) + "#comments"
    )


COMMENT_DRAFT_KEY = "weft.comment_draft"


@workspace_view
@require_POST
def task_edit(request: SeatRequest, seat: Seat, task_id: int) -> HttpResponse:
    found = access_task(seat.workspace, task_id)
    form = TaskForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Nothing was saved: " + _form_errors(form))
    else:
        try:
            services.task_update(task=found, by_user=request.user, **form.cleaned_data)
        except WeftError as error:
            _error(request, error)
        else:
            messages.success(request, "Saved.")
    return redirect("boards:task", slug=seat.workspace.slug, task_id=found.pk)


@workspace_view
@require_POST
def task_move(request: SeatRequest, seat: Seat, task_id: int) -> HttpResponse:
    found = access_task(seat.workspace, task_id)
    form = MoveForm(request.POST)
    if not form.is_valid():
        message = "Tasks move into Doing only when an agent starts them."
        if request.htmx:
            return HttpResponse(message, status=400)
        messages.error(request, message)
        return _back(request, _board_url(seat))
    try:
        services.person_move(
            task=found,
            column=form.cleaned_data["column"],
            position=form.cleaned_data["position"],
            by_user=request.user,
        )
    except WeftError as error:
        if request.htmx:
            return HttpResponse(error.message, status=error.http_status)
        _error(request, error)
    else:
        if request.htmx:
            return HttpResponse(status=204)
        messages.success(request, f"Moved #{found.pk} to {Column(form.cleaned_data['column']).label}.")
    return _back(request, _board_url(seat))


@workspace_view
@require_POST
def task_trash(request: SeatRequest, seat: Seat, task_id: int) -> HttpResponse:
    found = access_task(seat.workspace, task_id)
    try:
        services.task_trash(task=found, by_user=request.user)
    except WeftError as error:
        _error(request, error)
    else:
        undo = reverse("boards:task_restore", kwargs={"slug": seat.workspace.slug, "task_id": found.pk})
        _undoable(request, f"Moved #{found.pk} {found.title} to Trash", undo)
    return redirect(_board_url(seat))


@workspace_view
@require_POST
def task_restore(request: SeatRequest, seat: Seat, task_id: int) -> HttpResponse:
    found = access_task(seat.workspace, task_id)
    try:
        services.task_restore(task=found, by_user=request.user)
    except WeftError as error:
        _error(request, error)
    else:
        messages.success(request, f"Restored #{found.pk} {found.title}.")
    return _back(request, reverse("boards:trash", kwargs={"slug": seat.workspace.slug}))


@workspace_view
@require_GET
def inbox(request: SeatRequest, seat: Seat) -> HttpResponse:
    found = selectors.inbox_for_user(workspace=seat.workspace, user=request.user)
    context = {
        **_nav(seat),
        "entries": selectors.inbox_entries(found),
        "snoozed": found.snoozed,
        "InboxKind": InboxKind,
    }
    return render(request, "boards/inbox.html", context)


def _decided(
    request: SeatRequest, seat: Seat, *, ok: bool, text: str, item_id: int, undo: str = ""
) -> HttpResponse:
    """After a decision: a notice in place of the item (htmx) or a message and the Inbox again."""
    if request.htmx:
        context = {"ok": ok, "text": text, "item_id": item_id, "workspace": seat.workspace, "undo": undo}
        response = render(request, "boards/_decided.html", context)
        response["HX-Trigger"] = "weft:refresh"
        return response
    if undo:
        _undoable(request, text, undo)
    else:
        (messages.success if ok else messages.error)(request, text)
    return redirect("boards:inbox", slug=seat.workspace.slug)


def _already_decided_text(error: WeftError) -> str:
    return f"Already decided — nothing changed. {error.message[:1].upper() + error.message[1:]}"


@workspace_view
@require_POST
def inbox_decide(request: SeatRequest, seat: Seat, item_id: int) -> HttpResponse:
    item = access_inbox_item(seat.workspace, item_id)
    form = DecideForm(request.POST)
    if not form.is_valid():
        return _decided(request, seat, ok=False, text=_form_errors(form), item_id=item.pk)
    decision = form.cleaned_data["decision"]
    try:
        services.inbox_decide(
            item=item,
            user=request.user,
            decision=decision,
            note=form.cleaned_data["note"].strip(),
            snooze_until=form.snooze_until(clock.db_now()),
        )
    except WeftError as error:
        text = _already_decided_text(error) if error.code == "already_decided" else error.message
        return _decided(request, seat, ok=False, text=text, item_id=item.pk)
    texts = QUESTION_DECIDED_TEXT if item.kind == InboxKind.QUESTION else DECIDED_TEXT
    undo = ""
    if decision == Decision.DROP and item.kind == InboxKind.REVIEW:
        undo = reverse("boards:inbox_undo_drop", kwargs={"slug": seat.workspace.slug, "item_id": item.pk})
    text = f"#{item.task_id} {item.task.title}: {texts[decision]}"
    return _decided(request, seat, ok=True, text=text, item_id=item.pk, undo=undo)


@workspace_view
@require_POST
def inbox_undo_drop(request: SeatRequest, seat: Seat, item_id: int) -> HttpResponse:
    item = access_inbox_item(seat.workspace, item_id)
    try:
        services.inbox_undo_drop(item=item, user=request.user)
    except WeftError as error:
        _error(request, error)
    else:
        messages.success(request, f"#{item.task_id} {item.task.title} waits in the Inbox again.")
    return redirect("boards:inbox", slug=seat.workspace.slug)


@workspace_view
@require_POST
def question_answer(request: SeatRequest, seat: Seat, question_id: int) -> HttpResponse:
    question = access_question(seat.workspace, question_id)
    item_id = getattr(getattr(question, "inbox_item", None), "pk", 0)
    form = AnswerForm(request.POST)
    if not form.is_valid():
        return _decided(request, seat, ok=False, text=_form_errors(form), item_id=item_id)
    try:
        services.question_answer(question=question, user=request.user, answer=form.cleaned_data["text"])
    except WeftError as error:
        text = _already_decided_text(error) if error.code == "already_decided" else error.message
        return _decided(request, seat, ok=False, text=text, item_id=item_id)
    text = f"Answered on #{question.task_id}: the agent gets it with its next call."
    return _decided(request, seat, ok=True, text=text, item_id=item_id)
