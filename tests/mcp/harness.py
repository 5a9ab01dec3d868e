"""Helpers for MCP tests: agent tokens minted in the database and an in-process MCP client.

The in-process client speaks raw JSON-RPC over httpx's ASGI transport to weft.asgi.application
(with its lifespan started), so tests see exactly what goes over the wire.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any, cast

import httpx
from django.conf import settings
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application

from accounts.connections import connection_authorize
from accounts.models import AgentConnection, User, Workspace

ACCEPT = "application/json, text/event-stream"
PROTOCOL = "2025-06-18"


def agent_token(
    user: User,
    workspace: Workspace,
    *,
    scope: str = "mcp offline_access",
    resource: list[str] | None = None,
    name: str = "Test agent",
    application: Application | None = None,
) -> tuple[str, AgentConnection]:
    """A live access token for a fresh (or given) client signed in by `user` for `workspace`."""
    from oauth2_provider.models import set_token_value

    app = application or Application.objects.create(
        name=name,
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="http://127.0.0.1/callback",
    )
    connection = connection_authorize(user=user, application=app, workspace=workspace)
    raw = secrets.token_urlsafe(32)
    access = AccessToken(
        user=user,
        application=app,
        expires=timezone.now() + timedelta(hours=1),
        scope=scope,
        resource=[settings.WEFT_MCP_URL] if resource is None else resource,
    )
    set_token_value(access, raw)  # stored as the product stores it: its checksum only
    access.save()
    return raw, connection


@contextlib.asynccontextmanager
async def lifespan(app: Any) -> AsyncIterator[None]:
    """Run the ASGI lifespan of `app` around the block (httpx's transport does not)."""
    inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def receive() -> dict[str, Any]:
        return await inbox.get()

    async def send(message: dict[str, Any]) -> None:
        await outbox.put(message)

    task = asyncio.create_task(app({"type": "lifespan", "asgi": {"version": "3.0"}}, receive, send))
    await inbox.put({"type": "lifespan.startup"})
    started = await asyncio.wait_for(outbox.get(), 10)
    assert started["type"] == "lifespan.startup.complete", started
    try:
        yield
    finally:
        await inbox.put({"type": "lifespan.shutdown"})
        with contextlib.suppress(Exception):
            await asyncio.wait_for(task, 10)


class MCP:
    """A tiny JSON-RPC client for /api/mcp."""

    def __init__(self, client: httpx.AsyncClient, token: str | None) -> None:
        self.client = client
        self.token = token
        self._id = 0

    def headers(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        headers = {"accept": ACCEPT, "content-type": "application/json", "mcp-protocol-version": PROTOCOL}
        if self.token:
            headers["authorization"] = f"Bearer {self.token}"
        headers.update(extra or {})
        return headers

    async def post(self, method: str, params: dict[str, Any] | None = None, **extra: str) -> httpx.Response:
        self._id += 1
        body = {"jsonrpc": "2.0", "id": self._id, "method": method, "params": params or {}}
        return await self.client.post("/api/mcp", json=body, headers=self.headers(extra or None))

    async def rpc(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        response = await self.post(method, params)
        assert response.status_code == 200, (response.status_code, response.text)
        data = response.json()
        assert "result" in data, data
        return data["result"]

    async def tools(self) -> list[dict[str, Any]]:
        return (await self.rpc("tools/list"))["tools"]

    async def call(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        return await self.rpc("tools/call", {"name": name, "arguments": arguments or {}})


@contextlib.asynccontextmanager
async def in_process() -> AsyncIterator[httpx.AsyncClient]:
    """An httpx client bound to Weft's ASGI application, lifespan running."""
    import weft.asgi
    from weft.asgi import application
    from weft.mcp.server import mcp_asgi_app

    # The SDK's session manager runs once per instance: a fresh MCP app for every client.
    weft.asgi.mcp_app = mcp_asgi_app()
    async with (
        lifespan(application),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=cast(Any, application)),
            base_url=settings.WEFT_BASE_URL,
            timeout=30,
        ) as client,
    ):
        yield client


def text_of(result: dict[str, Any]) -> str:
    return "\n".join(block["text"] for block in result["content"] if block["type"] == "text")
