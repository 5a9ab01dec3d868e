"""The personal access tokens page of a workspace: list, create (the secret shown once), revoke."""

from __future__ import annotations

from typing import Any, cast

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import redirect, render

from accounts.access import access_personal_token, access_seat
from accounts.forms import TokenForm
from accounts.models import Seat, User
from accounts.tokens import pat_create, pat_revoke, tokens_for_seat


def _page(
    request: HttpRequest, seat: Seat, form: TokenForm, *, status: int = 200, **extra: Any
) -> HttpResponse:
    context = {
        "seat": seat,
        "workspace": seat.workspace,
        "rows": tokens_for_seat(seat=seat),
        "form": form,
        **extra,
    }
    return render(request, "accounts/tokens.html", context, status=status)


def _seat(request: HttpRequest, slug: str) -> Seat:
    return access_seat(cast(User, request.user), slug)


def _only(method: str) -> HttpResponse:
    return HttpResponseNotAllowed([method])


# Each view looks the seat (and the token) up before checking the method: a stranger's request
# answers 404 whatever its method.
@login_required
def tokens(request: HttpRequest, slug: str) -> HttpResponse:
    seat = _seat(request, slug)
    if request.method != "GET":
        return _only("GET")
    return _page(request, seat, TokenForm())


@login_required
def token_create(request: HttpRequest, slug: str) -> HttpResponse:
    seat = _seat(request, slug)
    if request.method != "POST":
        return _only("POST")
    form = TokenForm(request.POST)
    if not form.is_valid():
        return _page(request, seat, form, status=400)
    created = pat_create(
        seat=seat,
        name=form.cleaned_data["name"],
        expires_in_days=form.expires_in_days(),
        can_decide=form.cleaned_data["can_decide"],
    )
    # Rendered, not redirected: the secret is in this answer only and is never stored readable.
    return _page(request, seat, TokenForm(), created=created.token, secret=created.secret)


@login_required
def token_revoke(request: HttpRequest, slug: str, token_id: int) -> HttpResponse:
    token = access_personal_token(_seat(request, slug), token_id)
    if request.method != "POST":
        return _only("POST")
    pat_revoke(token=token)
    messages.success(request, f"The token {token.name} is revoked; calls with it are refused.")
    return redirect("workspace_tokens", slug=slug)
