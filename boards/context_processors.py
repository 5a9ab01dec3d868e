"""Navigation context on every workspace page: the Inbox count and the attention meter."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from accounts.models import Seat
from boards import selectors


def attention_nav(request: HttpRequest) -> dict[str, Any]:
    user = getattr(request, "user", None)
    match = getattr(request, "resolver_match", None)
    slug = match.kwargs.get("slug") if match else None
    if user is None or not user.is_authenticated or not slug:
        return {}
    seat = Seat.objects.select_related("workspace").filter(user=user, workspace__slug=slug).first()
    if seat is None:
        return {}
    return {
        "nav_workspace": seat.workspace,
        "nav_attention": selectors.attention_status(workspace=seat.workspace),
    }
