"""The MCP client's name and version, captured onto its agent connection.

A client names itself in `initialize` (`params.clientInfo`, protocol 2025-06-18 and before) or
in every request's `_meta` (`io.modelcontextprotocol/clientInfo`, protocol 2026-07-28). The
SDK runs `initialize` itself and keeps nothing in stateless mode, so this ASGI wrapper reads a
POST body before the SDK does, and when it names a client, stores the name and version on the
bearer's connection (`AgentConnection.client_name` / `client_version`). submit_issue fills
`reporter_app_version` from them when an agent names no build.

It never changes or fails the request: a body past the SDK's size limit is passed on unread,
a token that does not verify stores nothing, and a failure while storing is only logged.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from asgiref.sync import sync_to_async
from django.db import close_old_connections
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger(__name__)

META_KEY = "io.modelcontextprotocol/clientInfo"
FIELD = 100


def client_info(body: bytes) -> tuple[str, str] | None:
    """(name, version) the request's client gave, if any (the first message that names one)."""
    if b"clientInfo" not in body:
        return None
    try:
        data = json.loads(body)
    except ValueError:
        return None
    for message in data if isinstance(data, list) else [data]:
        params = message.get("params") if isinstance(message, dict) else None
        if not isinstance(params, dict):
            continue
        meta = params.get("_meta")
        info = params.get("clientInfo") if message.get("method") == "initialize" else None
        if info is None and isinstance(meta, dict):
            info = meta.get(META_KEY)
        named = _named(info)
        if named is not None:
            return named
    return None


def _named(info: Any) -> tuple[str, str] | None:
    if not isinstance(info, dict):
        return None
    name, version = info.get("name"), info.get("version")
    if not isinstance(name, str) or not isinstance(version, str):
        return None
    name, version = name.replace("\x00", "").strip()[:FIELD], version.replace("\x00", "").strip()[:FIELD]
    return (name, version) if name and version else None


def _bearer(scope: Scope) -> str | None:
    for key, value in scope.get("headers", []):
        if key == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            return token.strip() if scheme.lower() == "bearer" and token.strip() else None
    return None


def _store(connection_id: int, name: str, version: str) -> None:
    from accounts.models import AgentConnection

    close_old_connections()
    try:
        # update(), not save(): a client naming itself is no change of grant (no cache clearing).
        AgentConnection.objects.filter(pk=connection_id).exclude(
            client_name=name, client_version=version
        ).update(client_name=name, client_version=version)
    finally:
        close_old_connections()


async def _remember(token: str, name: str, version: str) -> None:
    from weft.mcp.verifier import ConnectionTokenVerifier

    try:
        verified = await ConnectionTokenVerifier().verify_token(token)
        connection_id = (verified.claims or {}).get("connection_id") if verified else None
        if connection_id is not None:
            await sync_to_async(_store, thread_sensitive=False)(connection_id, name, version)
    except Exception:
        log.warning("could not store the MCP client's name and version", exc_info=True)


async def buffered(
    receive: Receive, limit: int = DEFAULT_MAX_REQUEST_BODY_SIZE
) -> tuple[list[Message], bytes | None]:
    """The request's body messages, and the body when it stays within `limit` (the SDK's)."""
    messages: list[Message] = []
    body = b""
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            return messages, None
        body += message.get("body", b"")
        if len(body) > limit:
            return messages, None
        if not message.get("more_body"):
            return messages, body


def capturing_client_info(app: ASGIApp) -> ASGIApp:
    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        token = _bearer(scope) if scope["type"] == "http" and scope.get("method") == "POST" else None
        if token is None:
            await app(scope, receive, send)
            return
        messages, body = await buffered(receive)
        named = client_info(body) if body is not None else None
        if named is not None:
            await _remember(token, *named)

        async def replay() -> Message:
            return messages.pop(0) if messages else await receive()

        await app(scope, replay, send)

    return wrapped
