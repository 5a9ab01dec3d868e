"""The Boards page: a workspace's live and archived boards, and the forms that create, rename,
archive and restore them (owners and admins; the services refuse anyone else).

Thin: parse → access → service/selector → render. A foreign board id is the same 404 as a
missing one (`access_board` inside `workspace_view`).
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from accounts.models import Seat
from boards import limits, selectors, services
from boards.access import access_board
from boards.views import SeatRequest, _error, _undoable, workspace_view
from weft.errors import WeftError

# What a refused new-board form held, shown again on the Boards page (nothing typed is lost).
DRAFT_KEY = "weft.board_draft"


def _boards_url(seat: Seat) -> str:
    return reverse("boards:boards", kwargs={"slug": seat.workspace.slug})


def _board_page(seat: Seat, board_id: int) -> str:
    return reverse("boards:board", kwargs={"slug": seat.workspace.slug}) + f"?board={board_id}"


def _typed(request: HttpRequest) -> str:
    return str(request.POST.get("name", ""))


@workspace_view
@require_GET
def boards(request: SeatRequest, seat: Seat) -> HttpResponse:
    context = {
        "seat": seat,
        "workspace": seat.workspace,
        "overview": selectors.boards_overview(seat.workspace),
        "may_manage": seat.can_manage,
        "name_limit": limits.BOARD_NAME,
        "draft": request.session.pop(DRAFT_KEY, ""),
    }
    return render(request, "boards/boards.html", context)


@workspace_view
@require_POST
def board_create(request: SeatRequest, seat: Seat) -> HttpResponse:
    try:
        board = services.board_create(workspace=seat.workspace, name=_typed(request), by_seat=seat)
    except WeftError as error:
        _error(request, error)
        # Kept as typed, cut well past the limit (the refusal names the length), without NUL.
        request.session[DRAFT_KEY] = _typed(request)[: limits.BOARD_NAME * 2].replace(limits.NUL, "")
        return redirect(_boards_url(seat))
    messages.success(request, f"Created the board {board.name}.")
    return redirect(_board_page(seat, board.pk))


@workspace_view
@require_POST
def board_rename(request: SeatRequest, seat: Seat, board_id: int) -> HttpResponse:
    found = access_board(seat.workspace, board_id)
    try:
        board = services.board_rename(board=found, name=_typed(request), by_seat=seat)
    except WeftError as error:
        _error(request, error)
    else:
        if board.name != found.name:
            messages.success(request, f"Renamed {found.name} to {board.name}.")
    return redirect(_boards_url(seat))


@workspace_view
@require_POST
def board_archive(request: SeatRequest, seat: Seat, board_id: int) -> HttpResponse:
    found = access_board(seat.workspace, board_id)
    try:
        services.board_archive(board=found, by_seat=seat)
    except WeftError as error:
        _error(request, error)
    else:
        undo = reverse("boards:board_restore", kwargs={"slug": seat.workspace.slug, "board_id": found.pk})
        _undoable(request, f"Archived {found.name}: agents are no longer offered its tasks", undo)
    return redirect(_boards_url(seat))


@workspace_view
@require_POST
def board_restore(request: SeatRequest, seat: Seat, board_id: int) -> HttpResponse:
    found = access_board(seat.workspace, board_id)
    try:
        services.board_restore(board=found, by_seat=seat)
    except WeftError as error:
        _error(request, error)
    else:
        messages.success(request, f"Restored {found.name}: agents are offered its tasks again.")
    return redirect(_boards_url(seat))
