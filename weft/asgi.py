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
from channels.security.websocket import WebsocketDenier  # noqa: E402
from django.conf import settings  # noqa: E402
from django.http.request import split_domain_port, validate_host  # noqa: E402
from starlette.middleware.cors import CORSMiddleware  # noqa: E402
from starlette.types import Receive, Scope, Send  # noqa: E402

from weft.periodic import embedded_timer  # noqa: E402
from weft.routing import websocket_urlpatterns  # noqa: E402
from weft.stream import STREAM_PATH  # noqa: E402
from weft.stream.app import stream_app  # noqa: E402


def _header(scope: dict[str, Any], name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return str(value.decode("latin1"))
    return None


def websocket_origin_allowed(scope: dict[str, Any]) -> bool:
    """Django's CSRF origin rule for web sockets: scheme, host and port must all match.

    The Host must be one of ALLOWED_HOSTS; the Origin must then be the request's own origin or
    one of CSRF_TRUSTED_ORIGINS (the base URL's origin by default, which is what a browser
    behind a TLS-terminating proxy sends). A socket without an Origin is refused, as before.
    """
    origin = _header(scope, b"origin")
    if not origin:
        return False
    host = (_header(scope, b"host") or "").lower()
    domain, _port = split_domain_port(host)
    if not domain or not validate_host(domain, settings.ALLOWED_HOSTS):
        return False
    origin = origin.rstrip("/").lower()
    if origin in {trusted.rstrip("/").lower() for trusted in settings.CSRF_TRUSTED_ORIGINS}:
        return True
    scheme = "https" if scope.get("scheme") == "wss" else "http"
    return origin == f"{scheme}://{host}"


class WebsocketOriginValidator:
    """Refuses a web socket whose Origin is not allowed (see `websocket_origin_allowed`)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if scope["type"] == "websocket" and not websocket_origin_allowed(scope):
            return await WebsocketDenier()(scope, receive, send)
        return await self.app(scope, receive, send)


websocket_app = WebsocketOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns)))


from weft import relay_loop  # noqa: E402
from weft.mcp import gate  # noqa: E402
from weft.mcp.server import MCP_PATH, _origin_regex, mcp_asgi_app  # noqa: E402

MCP_PATHS = ("/api/mcp", "/.well-known/oauth-protected-resource/api/mcp")
# The SDK's session manager runs once per instance, so every lifespan gets a fresh MCP app
# (a test process may start the server several times).
mcp_app: Any = mcp_asgi_app()


async def _no_server_stream(scope: Scope, receive: Receive, send: Send) -> None:
    """405 for GET /api/mcp: Weft sends no server-initiated messages, so it offers no SSE stream.

    The Streamable HTTP transport lets such a server answer the GET with 405, which clients
    take as "no stream" and carry on with POST; the SDK would otherwise hold the stream open
    and idle for as long as the client keeps it.
    """
    await send(
        {
            "type": "http.response.start",
            "status": 405,
            "headers": [(b"allow", b"POST"), (b"content-length", b"0")],
        }
    )
    await send({"type": "http.response.body", "body": b""})


# The same CORS answer as the MCP app's, so a browser-based client reads the 405 too.
no_server_stream = CORSMiddleware(
    _no_server_stream,
    allow_origin_regex=_origin_regex(list(settings.WEFT_MCP_ALLOWED_ORIGINS)),
    allow_methods=["GET", "POST", "DELETE", "OPTIONS"],
    expose_headers=["mcp-session-id", "mcp-protocol-version", "www-authenticate"],
)


async def _lifespan(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Run the MCP app's lifespan and, in the embedded default, the periodic timer beside it; at
    shutdown, let the loop's relays finish, then close the MCP gate's pool (opened by the first
    tool call on PostgreSQL)."""
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
            # A relay the last calls scheduled runs first (a stuck one is left after 10 s): run
            # after the close, it would open the pool again and leave it open past shutdown.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(relay_loop.settled(), 10)
            await gate.close_pool()
        await send(message)

    await mcp_app(scope, receive, wrapped_send)


async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
    kind = scope["type"]
    if kind == "lifespan":
        await _lifespan(scope, receive, send)
    elif kind == "websocket":
        await websocket_app(scope, receive, send)
    elif scope["path"].rstrip("/") in MCP_PATHS:
        if scope["method"] == "GET" and scope["path"].rstrip("/") == MCP_PATH:
            await no_server_stream(scope, receive, send)
        else:
            await mcp_app(scope, receive, send)
    elif scope["path"].rstrip("/") == STREAM_PATH:
        await stream_app(scope, receive, send)
    else:
        await django_app(scope, receive, send)
