"""Failures nobody planned for keep the hint contract: an error with a code and a hint.

`failure_error(exc, where)` is the answer to any: `unavailable` for a lost database or cache (the
same call can work a few seconds later), else `internal_error` with the request id that finds the
logged traceback. The MCP tools and the REST API answer with it.

`answering_failures(app)` wraps the MCP ASGI app (weft.mcp.server): a crash before or after the
tool (the token check meeting a lost database) and the SDK's bare 413 for an oversized body are
answered with the error's code and its Wait:/Fix: line, never a bare HTTP 500.
"""

from __future__ import annotations

import json
import logging
import uuid
from typing import Any

import psycopg
import psycopg_pool
import redis.exceptions
from django.db import InterfaceError, OperationalError
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from starlette.types import ASGIApp

from weft.errors import WeftError, internal_error, unavailable
from weft.hints import fix

log = logging.getLogger(__name__)

# psycopg_pool.PoolTimeout is a psycopg.OperationalError; psycopg's errors reach us unwrapped
# when they come from the pool rather than through Django's cursor.
REDIS_ERRORS: tuple[type[Exception], ...] = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)
UNAVAILABLE_ERRORS: tuple[type[Exception], ...] = (
    OperationalError,
    InterfaceError,
    psycopg.OperationalError,
    psycopg.InterfaceError,
    psycopg_pool.PoolTimeout,
    *REDIS_ERRORS,
)


def _is_unavailable(exc: BaseException) -> bool:
    """A lost or broken database or cache connection: the same call can work a few seconds later."""
    return isinstance(exc, UNAVAILABLE_ERRORS)


def failure_error(exc: Exception, where: str) -> WeftError:
    """A failure nobody planned for, logged: unavailable for a lost database or cache, else
    internal_error with the request id that finds the traceback."""
    if _is_unavailable(exc):
        log.warning("%s: a service is unavailable: %r", where, exc)
        return unavailable("the cache" if isinstance(exc, REDIS_ERRORS) else "the database")
    request_id = uuid.uuid4().hex
    log.error("%s failed unexpectedly (request %s)", where, request_id, exc_info=exc)
    return internal_error(request_id)


def answering_failures(app: ASGIApp) -> ASGIApp:
    """Failures outside a tool call (the token check meeting a lost database) keep the contract:
    a JSON-RPC error whose data carries the code and the Wait: line, never a bare HTTP 500."""

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        started = False
        # Starlette's error middleware answers a crash with a bare 500 and then re-raises: hold a
        # 500 until the app returns, so that answer can be replaced by one with a code and a hint.
        held: list[dict[str, Any]] = []
        replaced: list[bool] = []

        async def flush() -> None:
            nonlocal started
            started = started or bool(held)
            while held:
                await send(held.pop(0))

        async def tracking_send(message: Any) -> None:
            nonlocal started
            if replaced:
                return  # the body of the SDK's bare 413, already answered with a code and a hint
            if message["type"] == "http.response.start" and message.get("status") == 413 and not started:
                replaced.append(True)
                started = True
                await _send_error(send, _too_large(), status=413)
                return
            if message["type"] == "http.response.start" and message.get("status") == 500 and not started:
                held.append(message)
                return
            if len(held) == 1 and message["type"] == "http.response.body" and not message.get("more_body"):
                # The whole bare 500: wait for the exception that follows it; sent on a clean return.
                held.append(message)
                return
            await flush()
            started = True
            await send(message)

        try:
            await app(scope, receive, tracking_send)
            await flush()
            return
        except Exception as exc:
            if started:
                raise
            await _send_failure(send, exc)

    return guarded


def _too_large() -> WeftError:
    limit = DEFAULT_MAX_REQUEST_BODY_SIZE
    return WeftError(
        "invalid_argument",
        f"request: the body is over {limit} bytes; send less (every text argument has a limit)",
        details={"field": "request", "reason": "too_large", "maximumBytes": limit},
        fix=fix("get_my_work"),
    )


async def _send_failure(send: Any, exc: Exception) -> None:
    """The answer to a failure outside a tool call: a JSON-RPC error carrying the code and the hint."""
    await _send_error(send, failure_error(exc, "MCP request"))


async def _send_error(send: Any, error: WeftError, *, status: int | None = None) -> None:
    status = status or error.http_status
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32603, "message": error.as_text(), "data": error.as_json()},
        }
    ).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 503:
        headers.append((b"retry-after", b"5"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
