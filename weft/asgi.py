"""ASGI entry point: Django, the MCP endpoint and web sockets behind one application.

`/api/mcp` and its protected-resource metadata go to the MCP app (which needs the ASGI
lifespan), `websocket` scopes go to Channels, everything else to Django.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "weft.settings")

from django.core.asgi import get_asgi_application

django_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from django.conf import settings  # noqa: E402

from weft.periodic import embedded_timer  # noqa: E402
from weft.routing import websocket_urlpatterns  # noqa: E402

websocket_app = AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns)))


from weft.mcp.server import mcp_asgi_app  # noqa: E402

MCP_PATHS = ("/api/mcp", "/.well-known/oauth-protected-resource/api/mcp")
# The SDK's session manager runs once per instance, so every lifespan gets a fresh MCP app
# (a test process may start the server several times).
mcp_app: Any = mcp_asgi_app()


async def _lifespan(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Run the MCP app's lifespan and, in the embedded default, the periodic timer beside it."""
    global mcp_app
    mcp_app = mcp_asgi_app()
    stop = asyncio.Event()
    timer: asyncio.Task[None] | None = None

    async def wrapped_send(message: dict[str, Any]) -> None:
        nonlocal timer
        if message["type"] == "lifespan.startup.complete" and settings.WEFT_EMBEDDED_TIMER:
            timer = asyncio.create_task(embedded_timer(stop))
        if message["type"] == "lifespan.shutdown.complete":
            stop.set()
            if timer:
                with contextlib.suppress(Exception):
                    await timer
        await send(message)

    await mcp_app(scope, receive, wrapped_send)


async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
    kind = scope["type"]
    if kind == "lifespan":
        await _lifespan(scope, receive, send)
    elif kind == "websocket":
        await websocket_app(scope, receive, send)
    elif scope["path"].rstrip("/") in MCP_PATHS:
        await mcp_app(scope, receive, send)
    else:
        await django_app(scope, receive, send)
