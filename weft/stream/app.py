"""The ASGI app for `GET /api/v1/events/stream`: parse → access → catch-up and live feed → SSE.

Bearer tokens are the agents' OAuth access tokens for /api/mcp, checked by the MCP server's
verifier (audience, expiry, live connection), and the stream carries only the events of that
connection's workspace. A stream ends when its token expires or stops verifying (checked with
every heartbeat), when the client falls too far behind, or when the client goes away; the
client then reconnects with Last-Event-ID and loses nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from dataclasses import dataclass
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connection as db_connection
from mcp.server.auth.provider import AccessToken
from starlette.types import Receive, Scope, Send

from accounts.access import require_active_workspace
from accounts.connections import connection_live
from weft import events
from weft.errors import WeftError
from weft.mcp.verifier import ConnectionTokenVerifier
from weft.stream.feed import (
    PAGE,
    Item,
    Subscriber,
    catch_up_page,
    current_hub,
    frame,
    queue_limit,
)
from weft.stream.request import StreamRequest, fix_for, parse_request

HEARTBEAT_SECONDS = 15.0
REQUIRED_SCOPE = "mcp"
verifier = ConnectionTokenVerifier()


def heartbeat_seconds() -> float:
    return float(getattr(settings, "WEFT_STREAM_HEARTBEAT_SECONDS", HEARTBEAT_SECONDS))


@dataclass(frozen=True)
class Grant:
    """A verified bearer token: its connection and when it expires (unix seconds, None: never)."""

    token: str
    connection_id: int
    expires_at: int | None

    def expired(self) -> bool:
        return self.expires_at is not None and self.expires_at < time.time()


class Ended(Exception):
    """The stream is over; the comment says why (sent when the client is still there)."""

    def __init__(self, comment: str = "") -> None:
        super().__init__(comment)
        self.comment = comment


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return str(value.decode("latin1"))
    return None


async def _verify(token: str) -> AccessToken | None:
    verified = await verifier.verify_token(token)
    if verified is None or (verified.expires_at is not None and verified.expires_at < int(time.time())):
        return None
    return verified


async def _grant(scope: Scope) -> Grant | None:
    """The caller's verified token, or None (missing, unknown, expired, revoked, another audience)."""
    raw = _header(scope, b"authorization") or ""
    if not raw.lower().startswith("bearer "):
        return None
    token = raw[7:].strip()
    verified = await _verify(token)
    # The fixed test token of debug mode belongs to no connection, so it reads no workspace.
    connection_id = (verified.claims or {}).get("connection_id") if verified is not None else None
    if verified is None or not isinstance(connection_id, int):
        return None
    if REQUIRED_SCOPE not in verified.scopes:
        raise PermissionError
    return Grant(token=token, connection_id=connection_id, expires_at=verified.expires_at)


def _open(connection_id: int) -> tuple[int, int] | None:
    """The live connection's workspace (None: revoked or seat lost) and the newest position."""
    try:
        found = connection_live(connection_id=connection_id)
        if found is None:
            return None
        require_active_workspace(found.workspace)
        return found.workspace_id, events.newest_position()
    finally:
        db_connection.close()


async def _answer(send: Send, status: int, body: dict[str, Any], headers: list[tuple[bytes, bytes]]) -> None:
    data = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(data)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": data})


# The refusals of a token, with the code and the one action that fixes each (as every answer has).
TOKEN_REFUSALS = {
    "invalid_token": (
        "unauthenticated",
        "get a fresh access token for /api/mcp (refresh it, or sign the agent in again), "
        "then reconnect with Last-Event-ID",
    ),
    "insufficient_scope": (
        "forbidden",
        f"sign the agent in again asking for the {REQUIRED_SCOPE} scope, then reconnect",
    ),
}


async def _refuse_token(send: Send, status: int, error: str, description: str) -> None:
    """The MCP endpoint's bearer challenge (the same tokens, the same protected resource), with a hint."""
    metadata = f"{settings.WEFT_BASE_URL}/.well-known/oauth-protected-resource/api/mcp"
    challenge = f'Bearer error="{error}", error_description="{description}", resource_metadata="{metadata}"'
    code, fix = TOKEN_REFUSALS[error]
    body = {
        "error": error,
        "error_description": description,
        "code": code,
        "message": description,
        "fix": fix,
    }
    await _answer(send, status, body, [(b"www-authenticate", challenge.encode())])


async def _refuse(send: Send, error: WeftError, fix: str) -> None:
    body = {"code": error.code, "message": error.message, "details": error.details, "fix": fix}
    await _answer(send, error.http_status, body, [])


async def stream_app(scope: Scope, receive: Receive, send: Send) -> None:
    """Parse, authenticate, scope to the token's workspace, then stream until the stream ends."""
    if scope["method"] != "GET":
        refused = {"code": "method_not_allowed", "message": "the stream answers GET only", "fix": "send GET"}
        await _answer(send, 405, refused, [(b"allow", b"GET")])
        return
    try:
        grant = await _grant(scope)
    except PermissionError:
        await _refuse_token(send, 403, "insufficient_scope", f"Required scope: {REQUIRED_SCOPE}")
        return
    if grant is None:
        await _refuse_token(send, 401, "invalid_token", "Authentication required")
        return
    try:
        request = parse_request(
            scope.get("query_string", b"").decode("latin1"), _header(scope, b"last-event-id")
        )
        opened = await sync_to_async(_open, thread_sensitive=False)(grant.connection_id)
        if opened is not None:
            request.check_cursor(opened[1])
    except WeftError as error:
        await _refuse(
            send, error, fix_for(error) if error.code == "invalid_argument" else error.fix.lines()[0]
        )
        return
    if opened is None:
        await _refuse_token(send, 401, "invalid_token", "Authentication required")
        return
    workspace_id, head = opened
    await Stream(send, grant, request, workspace_id).run(receive, head=head)


class Stream:
    """One client's stream: the cursor it has, its catch-up from the log, then the live feed."""

    def __init__(self, send: Send, grant: Grant, request: StreamRequest, workspace_id: int) -> None:
        self.send = send
        self.grant = grant
        self.request = request
        self.subscriber = Subscriber(workspace_id, request.filter, queue_limit())
        self.cursor = 0

    async def write(self, data: bytes) -> None:
        if self.subscriber.gone:
            raise Ended
        await self.send({"type": "http.response.body", "body": data, "more_body": True})

    async def run(self, receive: Receive, *, head: int) -> None:
        hub = current_hub()
        # Join before the catch-up read (see weft/stream/feed.py): the two overlap, never miss.
        hub.join(self.subscriber, head=head)
        watcher = asyncio.create_task(self._watch(receive))
        try:
            await self.send({"type": "http.response.start", "status": 200, "headers": _STREAM_HEADERS})
            self.cursor = head if self.request.after is None else self.request.after
            # An `id:` without data dispatches nothing but gives the client its cursor at once.
            await self.write(f": connected\nid: {self.cursor}\n\n".encode())
            await self._catch_up()
            await self._follow()
        except Ended as ended:
            if ended.comment and not self.subscriber.gone:
                with contextlib.suppress(OSError):
                    await self.send({"type": "http.response.body", "body": f": {ended.comment}\n\n".encode()})
        except OSError:
            pass  # the client went away mid-write
        finally:
            hub.leave(self.subscriber)
            watcher.cancel()

    async def _watch(self, receive: Receive) -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        self.subscriber.close()

    async def _catch_up(self) -> None:
        """Send what the log holds after the client's cursor, page by page, with `gap` when trimmed."""
        wanted = self.request.filter
        while True:
            read = sync_to_async(catch_up_page, thread_sensitive=False)
            page, trimmed_through = await read(self.subscriber.workspace_id, self.cursor, wanted)
            if self.cursor < trimmed_through:
                # Events after the cursor may be gone: say so, then go on from the oldest cursor held.
                gap = {"after": str(self.cursor), "oldestCursor": str(trimmed_through)}
                await self.write(frame(id=trimmed_through, event="gap", data=gap))
                self.cursor = trimmed_through
            await self._send_items(page)
            if len(page) < PAGE:
                return

    async def _send_items(self, items: list[Item]) -> None:
        for item in items:
            if item.position > self.cursor:  # the catch-up and the live feed overlap
                await self.write(item.frame)
                self.cursor = item.position

    async def _follow(self) -> None:
        """The live feed, with a heartbeat (and a fresh check of the token) every heartbeat seconds."""
        interval = heartbeat_seconds()
        beat = time.monotonic() + interval
        while True:
            items = await self.subscriber.take(max(0.0, beat - time.monotonic()))
            if self.subscriber.gone:
                raise Ended
            if self.subscriber.overflowed:
                raise Ended("too far behind; reconnect with Last-Event-ID to resume")
            await self._send_items(items)
            if time.monotonic() >= beat:
                if self.grant.expired() or await _verify(self.grant.token) is None:
                    raise Ended("the access token is no longer valid; reconnect with a fresh one")
                await self.write(b": keepalive\n\n")
                beat = time.monotonic() + interval


_STREAM_HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]
