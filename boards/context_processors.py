"""Navigation context on every page of a workspace: the Inbox count and the attention meter.

Pages outside a workspace URL (/agents/, /connect/, account settings) show the workspace the
navigation points at, so the Inbox and the meter are in the same header everywhere.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from accounts.access import find_seat
from accounts.context_processors import workspace_nav
from boards import selectors


def attention_nav(request: HttpRequest) -> dict[str, Any]:
    user = getattr(request, "user", None)
    match = getattr(request, "resolver_match", None)
    slug = match.kwargs.get("slug") if match else None
    if slug:
        seat = find_seat(user, slug)
        workspace = seat.workspace if seat else None
    else:
        # The accounts processor already chose the workspace the links point at; asking it again
        # costs one query of the user's seats on these few pages.
        workspace = workspace_nav(request).get("nav_workspace")
    if workspace is None:
        return {}
    return {
        "nav_workspace": workspace,
        "nav_attention": selectors.attention_status(workspace=workspace),
    }
