"""A person's own work from the board and the task page: Start and Stop (POST only).

Done is the board's Move to Done (`views.task_move` → `services.person_move`), which completes
the person's own run. Thin like `boards.views`: access → service → message → back.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.views.decorators.http import require_POST

from accounts.models import Seat
from boards import services
from boards.access import access_task
from boards.views import SeatRequest, _back, _board_url, _error, workspace_view
from weft.errors import WeftError


@workspace_view
@require_POST
def task_start(request: SeatRequest, seat: Seat, task_id: int) -> HttpResponse:
    found = access_task(seat.workspace, task_id)
    try:
        started = services.person_start(task=found, user=request.user)
    except WeftError as error:
        _error(request, error)
    else:
        again = " (you already held it; the lease is renewed)" if started.resumed else ""
        messages.success(request, f"Started #{found.pk} {found.title}: it is yours in Doing{again}.")
    return _back(request, _board_url(seat))


@workspace_view
@require_POST
def task_stop(request: SeatRequest, seat: Seat, task_id: int) -> HttpResponse:
    found = access_task(seat.workspace, task_id)
    try:
        services.person_stop(task=found, user=request.user)
    except WeftError as error:
        _error(request, error)
    else:
        messages.success(request, f"Stopped #{found.pk} {found.title}: it is back in Todo for anyone.")
    return _back(request, _board_url(seat))
