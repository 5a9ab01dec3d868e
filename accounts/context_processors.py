"""Navigation context: the workspaces the signed-in user can switch between."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

# The session key holding the slug of the workspace the user switched to last.
LAST_WORKSPACE_KEY = "weft_workspace"


def workspace_nav(request: HttpRequest) -> dict[str, Any]:
    """`nav_seats` (all the user's seats), `nav_seat` (the seat of the workspace in the URL, if any)
    and `nav_workspace` (the workspace the navigation links point at)."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    seats = list(user.seats.select_related("workspace").order_by("workspace__name"))
    match = getattr(request, "resolver_match", None)
    slug = match.kwargs.get("slug") if match else None
    current = next((s for s in seats if s.workspace.slug == slug), None)
    shown = current
    if shown is None and seats:
        # Pages outside a workspace (account settings) point the navigation at the last one used.
        last = request.session.get(LAST_WORKSPACE_KEY) if hasattr(request, "session") else None
        shown = next((s for s in seats if s.workspace.slug == last), None) or max(
            seats, key=lambda s: s.created_at
        )
    return {
        "nav_seats": seats,
        "nav_seat": current,
        "nav_workspace": shown.workspace if shown else None,
    }
