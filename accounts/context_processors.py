"""Navigation context: the workspaces the signed-in user can switch between."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest


def workspace_nav(request: HttpRequest) -> dict[str, Any]:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    seats = list(user.seats.select_related("workspace").order_by("workspace__name"))
    match = getattr(request, "resolver_match", None)
    slug = match.kwargs.get("slug") if match else None
    current = next((s for s in seats if s.workspace.slug == slug), None)
    return {"nav_seats": seats, "nav_seat": current}
