"""`tools/call` on the stateless JSON endpoint as one exchange in the request's own task.

The SDK serves a stateless POST of a handshake-era protocol (2025-06-18 and earlier, what the
agents' clients speak) through its full session transport: a transport object, a task started
in the manager's task group, memory streams both ways and a JSON-RPC dispatcher, for one
request and one response. Every agent call is a `tools/call`, so that shell is most of what the
SDK costs a call. For a `tools/call` request this module runs the same kernel the SDK's own
single-exchange path runs (`serve_one`: the ServerRunner with its middleware, the MCPServer,
Weft's tools) directly, and writes the response as the legacy transport writes it.

It takes only what it answers exactly as the transport would: a POST at a handshake-era
version (or none), that passes the transport's security check, accepts JSON, sends JSON and
holds one JSON-RPC request with method `tools/call`. Everything else — other methods,
notifications, batches, bad bodies and headers, GET and DELETE, 2026-07-28 envelopes — goes
to the SDK's own handling untouched (with the body replayed when it was read here).
tests/mcp/test_exchange.py sends the same requests both ways and compares the answers byte
for byte.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import pydantic_core
from mcp.server.connection import Connection
from mcp.server.runner import serve_one
from mcp.server.streamable_http import check_accept_headers
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecurityMiddleware
from mcp.shared.dispatcher import CallOptions
from mcp.shared.exceptions import NoBackChannelError
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data
from mcp.shared.message import ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp_types import DEFAULT_NEGOTIATED_VERSION, ErrorData, JSONRPCError, JSONRPCRequest, JSONRPCResponse
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger(__name__)

_VERSION_HEADER = MCP_PROTOCOL_VERSION_HEADER.lower().encode("ascii")
_JSON = "application/json"


def single_exchange(manager: StreamableHTTPSessionManager) -> None:
    """Serve `manager`'s stateless JSON `tools/call` requests as one exchange (see above).

    Goes inside the manager's request-body limit, in front of its own handling, which gets
    every request this one does not take.
    """
    limit = manager.asgi_app
    limit.app = _Exchange(manager, limit.app)


@dataclass
class _Context:
    """The dispatch context of one exchange (mcp.shared.dispatcher.DispatchContext).

    As on the legacy stateless JSON transport: no back-channel (a request to the client raises
    NoBackChannelError) and no wire for notifications or progress, which are dropped.
    """

    transport: TransportContext
    request_id: Any
    message_metadata: ServerMessageMetadata
    cancel_requested: anyio.Event = field(default_factory=anyio.Event)
    can_send_request: bool = False

    async def send_raw_request(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> dict[str, Any]:
        raise NoBackChannelError(method)

    async def notify(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> None:
        return None

    async def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        return None


class _Exchange:
    def __init__(self, manager: StreamableHTTPSessionManager, fallback: ASGIApp) -> None:
        self.manager = manager
        self.fallback = fallback
        self.security = TransportSecurityMiddleware(manager.security_settings)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        version = _version(scope)
        if not self._eligible(scope, version):
            return await self.fallback(scope, receive, send)
        request = Request(scope, receive)
        if not await self._admissible(request):
            return await self.fallback(scope, receive, send)
        body = await request.body()
        message = _tools_call(body)
        if message is None:
            return await self.fallback(scope, _replaying(body, receive), send)
        answer = await self._answer(request, message, version or DEFAULT_NEGOTIATED_VERSION)
        await Response(
            answer.model_dump_json(by_alias=True, exclude_unset=True),
            status_code=200,
            headers={"Content-Type": _JSON},
        )(scope, receive, send)

    def _eligible(self, scope: Scope, version: str | None) -> bool:
        manager = self.manager
        return (
            scope["type"] == "http"
            and scope["method"] == "POST"
            and manager.stateless
            and manager.json_response
            and (version is None or version in HANDSHAKE_PROTOCOL_VERSIONS)
            and getattr(manager, "_task_group", None) is not None
        )

    async def _admissible(self, request: Request) -> bool:
        """The transport's checks of a POST's headers, in its order; a refusal is the SDK's to give."""
        if await self.security.validate_request(request, is_post=True) is not None:
            return False
        has_json, _ = check_accept_headers(request)
        # The transport's own Content-Type rule (an exact media type; the security check above only
        # looks at the prefix), which lives on its transport object: "application/jsonx" is its 415.
        content_type = request.headers.get("content-type", "")
        parts = [part.strip() for part in content_type.split(";")[0].split(",")]
        return has_json and _JSON in parts

    async def _answer(
        self, request: Request, message: JSONRPCRequest, version: str
    ) -> JSONRPCResponse | JSONRPCError:
        """The request run through the SDK's kernel; its exceptions mapped as its dispatcher maps them."""
        context = _Context(
            transport=TransportContext(kind="streamable-http", can_send_request=False),
            request_id=message.id,
            message_metadata=ServerMessageMetadata(request_context=request, can_send_request=False),
        )
        connection = Connection.from_envelope(version, None, None)
        try:
            result = await serve_one(
                self.manager.app,
                context,
                message.method,
                message.params,
                connection=connection,
                lifespan_state=getattr(self.manager, "_lifespan_state", None),
            )
        except Exception as exc:
            error = handler_exception_to_error_data(exc)
            if error is None:
                log.exception("handler for %r raised", message.method)
                error = ErrorData(code=0, message=str(exc))
            return JSONRPCError(jsonrpc="2.0", id=message.id, error=error)
        return JSONRPCResponse(jsonrpc="2.0", id=message.id, result=result)


def _version(scope: Scope) -> str | None:
    return next((value.decode("latin-1") for key, value in scope["headers"] if key == _VERSION_HEADER), None)


def _tools_call(body: bytes) -> JSONRPCRequest | None:
    """The body as one `tools/call` JSON-RPC request, or None for anything else."""
    try:
        raw = pydantic_core.from_json(body)
    except ValueError:
        return None
    if not isinstance(raw, dict) or raw.get("method") != "tools/call" or "id" not in raw:
        return None
    try:
        return JSONRPCRequest.model_validate(raw, by_name=False)
    except ValidationError:
        return None


def _replaying(body: bytes, receive: Receive) -> Receive:
    """`receive` with the body this module already read handed out once more first."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
