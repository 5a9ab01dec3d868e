"""Navigation context on every workspace page: the Inbox count and the attention meter."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from accounts.access import find_seat
from boards import selectors


def attention_nav(request: HttpRequest) -> dict[str, Any]:
    user = getattr(request, "user", None)
    match = getattr(request, "resolver_match", None)
    slug = match.kwargs.get("slug") if match else None
    seat = find_seat(user, slug) if slug else None
    if seat is None:
        return {}
    return {
        "nav_workspace": seat.workspace,
        "nav_attention": selectors.attention_status(workspace=seat.workspace),
    }
