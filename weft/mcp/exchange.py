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
from typing import Any, cast

import anyio
import pydantic_core
from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend
from mcp.server.connection import Connection
from mcp.server.request_state import RequestStateBoundary
from mcp.server.runner import serve_one
from mcp.server.streamable_http import check_accept_headers
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecurityMiddleware
from mcp.shared.dispatcher import CallOptions
from mcp.shared.exceptions import MCPError, NoBackChannelError
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data
from mcp.shared.message import ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp.types import CallToolResult, TextContent
from mcp_types import (
    DEFAULT_NEGOTIATED_VERSION,
    INTERNAL_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCRequest,
)
from mcp_types.methods import serialize_server_result
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import BaseModel, ValidationError
from starlette.requests import HTTPConnection, Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from weft.mcp.clients import buffered

log = logging.getLogger(__name__)

_VERSION_HEADER = MCP_PROTOCOL_VERSION_HEADER.lower().encode("ascii")
_JSON = "application/json"
_TOOLS_CALL = "tools/call"
# The params a plain call holds. With no `_meta`, `requestState` or `inputResponses`, the kernel's
# request-state middleware passes the call through and nothing is read off its context.
_PLAIN_PARAMS = frozenset({"name", "arguments"})


def single_exchange(manager: StreamableHTTPSessionManager, *, tools_read_context: bool) -> _Exchange:
    """Serve `manager`'s stateless JSON `tools/call` requests as one exchange (see above).

    Goes inside the manager's request-body limit, in front of its own handling, which gets
    every request this one does not take; `AheadOfMiddleware` puts it in front of the rest too.
    `tools_read_context`: a tool takes the request's Context, so every call needs the kernel's.
    """
    limit = manager.asgi_app
    exchange = _Exchange(manager, limit.app, limit.max_body_size, tools_read_context=tools_read_context)
    limit.app = exchange
    return exchange


class AheadOfMiddleware:
    """An agent's `tools/call` answered before the SDK's Starlette stack (its error and exception
    middleware, authentication, the auth context, the router, the scope check and the body limit).

    It takes a POST at the endpoint's own path with a Bearer token that the stack's own backend
    (the same verifier, the same resource check) accepts, with the scopes the endpoint requires,
    and a body within the SDK's limit; it then sets what the authentication middleware sets (the
    request's `auth` and `user`, the auth context for `get_access_token`) and hands the request to
    the exchange, which answers it or passes it back to `app`. Anything else — no token, a token
    refused, a scope missing, a body over the limit, another path, a failure while checking — goes
    to `app` untouched, which answers as it always did (a 401 with its WWW-Authenticate, a 403, a
    413). tests/mcp/test_exchange.py compares the answers both ways.
    """

    def __init__(
        self,
        app: ASGIApp,
        exchange: _Exchange,
        backend: BearerAuthBackend,
        required_scopes: list[str],
        path: str,
    ) -> None:
        self.app = app
        self.exchange = exchange
        self.backend = backend
        self.required_scopes = required_scopes
        self.path = path
        self.limit = exchange.limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self._at_endpoint(scope):
            return await self.app(scope, receive, send)
        try:
            credentials = await self.backend.authenticate(HTTPConnection(scope))
        except Exception:
            credentials = None  # the stack checks again, and answers the failure as it does
        if credentials is None or not all(s in credentials[0].scopes for s in self.required_scopes):
            return await self.app(scope, receive, send)
        messages, body = await buffered(receive, self.limit)
        if body is None:
            return await self.app(scope, _replaying_all(messages, receive), send)
        scope["auth"], scope["user"] = credentials
        token = auth_context_var.set(credentials[1])
        try:
            # The body read whole; what follows it on the stream (a disconnect) still comes from `receive`.
            await self.exchange.serve(scope, receive, send, self.app, body)
        finally:
            auth_context_var.reset(token)

    def _at_endpoint(self, scope: Scope) -> bool:
        """A POST at the endpoint's own path whose declared size is within the SDK's limit."""
        if scope["type"] != "http" or scope["method"] != "POST" or scope.get("root_path"):
            return False
        if scope["path"] != self.path:
            return False
        for key, value in scope["headers"]:
            if key == b"content-length":
                return bool(value.isdigit()) and int(value) <= self.limit
        return True


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
    def __init__(
        self,
        manager: StreamableHTTPSessionManager,
        fallback: ASGIApp,
        limit: int,
        *,
        tools_read_context: bool,
    ) -> None:
        self.manager = manager
        self.fallback = fallback
        self.limit = limit  # the request-body limit the exchange sits inside
        self.security = TransportSecurityMiddleware(manager.security_settings)
        kernel = manager.app
        # A plain call may skip the kernel's set-up only while it would add nothing (`_plain_call`).
        self.plain = (
            not tools_read_context
            and _TOOLS_CALL not in kernel.cache_hints
            and all(isinstance(layer, RequestStateBoundary) for layer in kernel.middleware)
        )
        self.text_results = _text_result_versions()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.serve(scope, receive, send, self.fallback)

    async def serve(
        self, scope: Scope, receive: Receive, send: Send, fallback: ASGIApp, body: bytes | None = None
    ) -> None:
        """Answer a `tools/call` here, hand anything else to `fallback` (with the body, when given or
        read here, replayed)."""
        version = _version(scope)
        unread = receive if body is None else _replaying(body, receive)
        if not self._eligible(scope, version):
            return await fallback(scope, unread, send)
        request = Request(scope, receive)
        if not await self._admissible(request):
            return await fallback(scope, unread, send)
        if body is None:
            body = await request.body()
        message = _tools_call(body)
        if message is None:
            return await fallback(scope, _replaying(body, receive), send)
        answer = await self._answer(request, message, version or DEFAULT_NEGOTIATED_VERSION)
        content = (
            answer if isinstance(answer, bytes) else answer.model_dump_json(by_alias=True, exclude_unset=True)
        )
        await Response(content, status_code=200, headers={"Content-Type": _JSON})(scope, receive, send)

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

    async def _answer(self, request: Request, message: JSONRPCRequest, version: str) -> JSONRPCError | bytes:
        """The request run through the SDK's kernel; its exceptions mapped as its dispatcher maps them.
        A result is the JSON-RPC response's bytes, as JSONRPCResponse writes them (the same keys in
        the same order, the same serializer) without validating the result once more."""
        try:
            result = await self._plain_call(message.params, version)
            if result is None:
                result = await self._through_kernel(request, message, version)
        except Exception as exc:
            error = handler_exception_to_error_data(exc)
            if error is None:
                log.exception("handler for %r raised", message.method)
                error = ErrorData(code=0, message=str(exc))
            return JSONRPCError(jsonrpc="2.0", id=message.id, error=error)
        return pydantic_core.to_json({"jsonrpc": "2.0", "id": message.id, "result": result})

    async def _plain_call(self, params: Any, version: str) -> dict[str, Any] | None:
        """A plain call (a tool's name and arguments, nothing else) as the kernel answers it, without
        the kernel's per-request set-up; None for any other call, which the kernel then runs.

        What the kernel does for such a call and this does too: validate the params with the
        handler's own model (a call that fails it goes to the kernel, for the kernel's error), run
        the tools/call handler, dump its result and shape it for the protocol version. What the
        kernel adds is for other calls: its session and request context (no tool reads them), the
        request-state middleware (a pass-through without `requestState`), cache hints and other
        middleware (none here; with either, every call goes to the kernel).
        """
        if not self.plain or not isinstance(params, dict) or not params.keys() <= _PLAIN_PARAMS:
            return None
        entry = self.manager.app.get_request_handler(_TOOLS_CALL)
        if entry is None:
            return None
        try:
            typed = entry.params_type.model_validate(params, by_name=False)
        except ValidationError:
            return None
        # The tools/call handler reads no request context (the tools take none).
        result = await entry.handler(cast(Any, None), typed)
        if isinstance(result, ErrorData):
            raise MCPError.from_error_data(result)
        if version in self.text_results:
            wire = _text_result(result)
            if wire is not None:
                return wire
        if isinstance(result, BaseModel):
            dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        else:
            dumped = dict(result or {})
        try:
            return serialize_server_result(_TOOLS_CALL, version, dumped)
        except ValidationError:
            log.exception("handler for %r returned an invalid result", _TOOLS_CALL)
            raise MCPError(code=INTERNAL_ERROR, message="Handler returned an invalid result") from None

    async def _through_kernel(
        self, request: Request, message: JSONRPCRequest, version: str
    ) -> dict[str, Any]:
        context = _Context(
            transport=TransportContext(kind="streamable-http", can_send_request=False),
            request_id=message.id,
            message_metadata=ServerMessageMetadata(request_context=request, can_send_request=False),
        )
        connection = Connection.from_envelope(version, None, None)
        return await serve_one(
            self.manager.app,
            context,
            message.method,
            message.params,
            connection=connection,
            lifespan_state=getattr(self.manager, "_lifespan_state", None),
        )


def _text_result(result: Any) -> dict[str, Any] | None:
    """A tool result of text blocks (and structured content) as the protocol's CallToolResult dumps
    it, built directly: the fields in the surface model's order, None left out. None for any other
    result (metadata, annotations, other content), which takes the SDK's dump and validation."""
    if type(result) is not CallToolResult or result.meta is not None or result.result_type != "complete":
        return None
    blocks = []
    for block in result.content:
        if type(block) is not TextContent or block.annotations is not None or block.meta is not None:
            return None
        blocks.append({"text": block.text, "type": "text"})
    wire: dict[str, Any] = {"content": blocks, "isError": result.is_error}
    if result.structured_content is not None:
        wire["structuredContent"] = result.structured_content
    return wire


def _text_result_versions() -> frozenset[str]:
    """The protocol versions whose CallToolResult dump `_text_result` gives, key for key and in
    order, for results of each shape it builds; for any other version the SDK's dump runs."""
    probes = [
        CallToolResult(content=[TextContent(type="text", text="probe")]),
        CallToolResult(
            content=[TextContent(type="text", text="a"), TextContent(type="text", text="b")],
            structured_content={"a": [1, None, "x"], "b": {"c": 1.5}, "d": None},
            is_error=True,
        ),
    ]
    versions = set()
    for version in HANDSHAKE_PROTOCOL_VERSIONS:
        sdk = [
            serialize_server_result(
                _TOOLS_CALL, version, probe.model_dump(by_alias=True, mode="json", exclude_none=True)
            )
            for probe in probes
        ]
        ours = [pydantic_core.to_json(_text_result(probe)) for probe in probes]
        if ours == [pydantic_core.to_json(dump) for dump in sdk]:
            versions.add(version)
    return frozenset(versions)


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


def _replaying_all(messages: list[Message], receive: Receive) -> Receive:
    """`receive` with the messages this module already read handed out once more first."""
    pending = list(messages)

    async def replay() -> Message:
        return pending.pop(0) if pending else await receive()

    return replay


def _replaying(body: bytes, receive: Receive) -> Receive:
    """`receive` with the body this module already read handed out once more first."""
    return _replaying_all([{"type": "http.request", "body": body, "more_body": False}], receive)
