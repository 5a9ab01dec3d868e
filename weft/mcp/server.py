"""Weft's MCP server: the official SDK's MCPServer, stateless, JSON responses, OAuth-protected.

weft/asgi.py mounts `mcp_asgi_app()` at /api/mcp (and its protected-resource metadata) and
forwards the ASGI lifespan to it. Each app registers its own tools (boards/mcp_tools.py);
this module holds what they share: the call wrapper that resolves the caller's connection,
meters the call, runs the service and renders the result with its hint.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Awaitable, Callable
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections
from mcp.server._otel import OpenTelemetryMiddleware
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolResult, TextContent
from pydantic import ValidationError
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp

from accounts.models import AgentConnection
from boards.limits import nul_path, without_nul
from weft import apool
from weft.errors import WeftError, invalid_argument
from weft.events import partial_instance
from weft.hints import Hint, fix, render_text
from weft.mcp import gate
from weft.mcp.clients import capturing_client_info
from weft.mcp.exchange import AheadOfMiddleware, single_exchange
from weft.mcp.failures import answering_failures, failure_error
from weft.mcp.fixes import corrected_call, field_name, parse_field, value_at
from weft.mcp.schemas import compact, untitled

MCP_PATH = "/api/mcp"
log = logging.getLogger(__name__)

INSTRUCTIONS = """\
Weft is the task board you share with the people you work for. The server holds the loop:
1. get_my_work {} — what you hold, answers and approvals waiting for you, and the best next task.
2. start_task {"id": ...} — claim it (a 20-minute lease). Never work on a task you have not started.
3. report_progress with runId, leaseToken and a note at least every 5 minutes; it renews the lease.
4. request_input only when a person must decide; the answer comes back through get_my_work.
5. complete_task with the outcome and evidence (artifacts, claims, notDone, unknowns, nextStep).
already_claimed and attention_queue_full are normal answers: do what their Wait:/Fix: line says.
Every response ends with one next action (Next:, Or:, Wait:, Fix: or Done.) — follow it.
"""


def error_result(error: WeftError) -> CallToolResult:
    """A refusal the agent acts on: isError, `Error:` + `Fix:`/`Wait:` text, `_next_action` in JSON."""
    return CallToolResult(
        content=[TextContent(type="text", text=error.as_text())],
        structured_content=error.as_json(),
        is_error=True,
    )


def success_result(summary: str, payload: dict[str, Any], hint: Hint) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=render_text(summary, hint))],
        structured_content={**payload, **hint.as_json()},
    )


def render_result(result: Any) -> CallToolResult:
    """A service/selector result (hint, payload(), summary()) as an MCP tool result."""
    return success_result(result.summary(), result.payload(), result.hint)


def _call_metered(
    fn: Callable[[Any], Any], connection_id: int | None, admitted: Any = None
) -> CallToolResult:
    """Load the connection, check the workspace, meter, run, render; WeftError → isError result.

    The connection is re-checked on every call (`connection_live`: not revoked, seat still
    held), whatever the token verifier cached — unless the gate `admitted` it (weft.mcp.gate).
    """
    from accounts.access import require_active_workspace
    from accounts.connections import connection_live
    from accounts.models import Usage
    from accounts.services import usage_consume

    close_old_connections()
    try:
        if admitted is not None:
            return _outcome(fn, admitted)
        connection = connection_live(connection_id=connection_id) if connection_id is not None else None
        if connection is None:
            return error_result(gate.unauthenticated())
        try:
            require_active_workspace(connection.workspace)
            usage_consume(workspace=connection.workspace, kind=Usage.AGENT_CALLS)
        except WeftError as error:
            return error_result(error)
        return _outcome(fn, connection)
    finally:
        close_old_connections()


def _outcome(fn: Callable[[Any], Any], connection: Any) -> CallToolResult:
    """`fn(connection)` rendered; a WeftError it raises is the isError result."""
    try:
        outcome = fn(connection)
    except WeftError as error:
        return error_result(error)
    return outcome if isinstance(outcome, CallToolResult) else render_result(outcome)


def _run_for_connection(
    fn: Callable[[Any], Any], connection_id: int | None, admitted: Any = None
) -> CallToolResult:
    """Sync part of a tool call; failures nobody planned for still answer inside the contract.

    A lost database or cache is `unavailable`, anything else `internal_error` with a request
    id that finds the logged traceback — never an exception for the SDK to turn into a bare error.
    """
    try:
        return _call_metered(fn, connection_id, admitted)
    except Exception as exc:
        # _call_metered's close_old_connections() has dropped a broken connection; the pool's
        # health check drops the ones a restart broke while idle.
        return error_result(failure_error(exc, "MCP tool call"))


async def call_as_connection(
    fn: Callable[[Any], Any],
    *,
    in_loop: bool = False,
    fast: Callable[[Any], Awaitable[Any | None]] | None = None,
) -> CallToolResult:
    """Run `fn(connection)` for the caller's connection in a worker thread; WeftError → isError result.

    `fn` returns a service result (rendered here) or a ready CallToolResult. On PostgreSQL the
    gate (connection, seat, workspace, meter) is one statement in the event loop (weft.mcp.gate),
    and `in_loop=True` — for an `fn` that touches no database — runs `fn` there too: no thread.
    `fast(connection)`, an async service for the common case on the loop's own pool, is tried
    first there: its result is the answer, and None (nothing changed) hands the call to `fn`. The
    gate rides on `fast`'s first statement (weft.mcp.gate.Riding): until that statement, `fast`
    may read the connection's id and workspace id only.
    """
    token = get_access_token()
    claims = (token.claims or {}) if token else {}
    connection_id = claims.get("connection_id")
    if not gate.enabled():
        return await sync_to_async(_run_for_connection, thread_sensitive=False)(fn, connection_id)
    return await _gated(
        fn, connection_id, in_loop=in_loop, fast=fast, workspace_id=claims.get("workspace_id")
    )


async def _gated(
    fn: Callable[[Any], Any],
    connection_id: int | None,
    *,
    in_loop: bool,
    fast: Callable[[Any], Awaitable[Any | None]] | None = None,
    workspace_id: int | None = None,
) -> CallToolResult:
    """`_run_for_connection` with the gate in the event loop (PostgreSQL): the same answers.
    Given the workspace the caller's token names, the gate rides on `fast`'s statement."""
    try:
        # The call's statements (gate, completion, startNext's claim) share one pooled connection.
        async with apool.one_connection():
            if fast is not None and connection_id is not None and workspace_id is not None:
                connection, done = await _riding(fast, connection_id, workspace_id)
            else:
                connection = await gate.admit(connection_id)
                if in_loop:
                    return _outcome(fn, connection)
                done = await fast(connection) if fast is not None else None
        if done is not None:
            return render_result(done)
    except WeftError as error:
        return error_result(error)
    except Exception as exc:
        return error_result(failure_error(exc, "MCP tool call"))
    return await sync_to_async(_run_for_connection, thread_sensitive=False)(fn, connection_id, connection)


async def _riding(
    fast: Callable[[Any], Awaitable[Any | None]], connection_id: int, workspace_id: int
) -> tuple[AgentConnection, Any]:
    """`fast`'s answer with the gate riding on its first statement, and the admitted connection.
    Whatever `fast` answers or raises, the gate's refusal comes first: a refused call's statement
    changed nothing but the meter."""
    given = partial_instance(AgentConnection, {"id": connection_id, "workspace_id": workspace_id})
    rider = gate.Riding(given)
    token = apool.riding.set(rider)
    try:
        done = await fast(given)
    except WeftError:
        await rider.admit()
        raise
    finally:
        apool.riding.reset(token)
    return await rider.admit(), done


class _TokenBackend(BearerAuthBackend):
    """The SDK's Bearer backend, its check of a token's resource remembered per resource: the
    check parses both URLs on every request, and a server's tokens name a handful of resources."""

    RESOURCES = 64

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._issued: dict[str | None, bool] = {}

    def _issued_for_this_resource(self, resource: str | None) -> bool:
        issued = self._issued.get(resource)
        if issued is None:
            issued = super()._issued_for_this_resource(resource)
            if len(self._issued) < self.RESOURCES:
                self._issued[resource] = issued
        return issued


class WeftMCPServer(MCPServer):
    """MCPServer whose argument errors, unknown tools and crashes keep the hint contract."""

    verifier: Any = None  # the token verifier it was built with (build_server)

    async def list_tools(self) -> list[Any]:
        """tools/list with untitled, compact schemas, and output schemas without the docstring every
        tool repeats: the list stays small in an agent's context (tests/issues/test_tool_list_size.py)."""
        listed = []
        for tool in await super().list_tools():
            output = compact(untitled(tool.output_schema))
            if isinstance(output, dict):
                output.pop("description", None)
            inputs = compact(untitled(tool.input_schema))
            listed.append(tool.model_copy(update={"input_schema": inputs, "output_schema": output}))
        return listed

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        tool = self._tool_manager.get_tool(name)
        if tool is None:
            return error_result(
                WeftError(
                    "not_found",
                    f"there is no tool named {name!r}",
                    details={"kind": "tool", "id": name},
                    fix=fix("get_my_work"),
                )
            )
        arguments = arguments or {}
        nul = nul_path(arguments)
        if nul is not None:
            # PostgreSQL's text and jsonb cannot hold NUL: refused before anything is stored.
            errors = _validation_errors(tool, without_nul(arguments))
            hint = _fix_for(tool, arguments, errors)
            reason = "must not contain NUL (\\u0000) characters"
            return error_result(invalid_argument(field_name(nul), reason, fix_hint=hint))
        try:
            result = await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError):
                errors = [dict(e) for e in cause.errors()]
                first = errors[0] if errors else {"loc": (), "msg": "invalid"}
                return error_result(
                    invalid_argument(
                        field_name(first.get("loc", ())),
                        str(first.get("msg", "invalid")),
                        fix_hint=_fix_for(tool, arguments, errors),
                    )
                )
            failure = cause if isinstance(cause, Exception) else exc
            return error_result(failure_error(failure, f"MCP tool {name}"))
        return _with_limit_fix(tool, arguments, result)


def _with_limit_fix(tool: Any, arguments: dict[str, Any], result: Any) -> Any:
    """A service's limit refusal answers with the same call cut to the limit, as schema errors do."""
    data = getattr(result, "structured_content", None) or {}
    error = data.get("error") if getattr(result, "is_error", False) else None
    details = (error or {}).get("details") or {}
    if not error or error.get("code") != "invalid_argument" or details.get("problem") != "too_long":
        return result
    loc = parse_field(str(details.get("field", "")))
    try:
        value = value_at(arguments, loc)
    except (KeyError, IndexError, TypeError):
        return result
    kind = "string_too_long" if isinstance(value, str) else "too_long"
    hint = _fix_for(
        tool, arguments, [{"loc": loc, "type": kind, "ctx": {"max_length": details.get("limit")}}]
    )
    return error_result(WeftError(error["code"], error["message"], details=details, fix=hint))


def _validation_errors(tool: Any, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    try:
        tool.fn_metadata.validate_arguments(arguments)
    except ValidationError as exc:
        return [dict(e) for e in exc.errors()]
    return []


def _fix_for(tool: Any, arguments: dict[str, Any], errors: list[dict[str, Any]]) -> Hint:
    """The refused call corrected from its schema, else the read that shows what is valid."""
    return corrected_call(
        tool.name,
        arguments,
        errors,
        validate=tool.fn_metadata.validate_arguments,
        required=set(tool.parameters.get("required", [])),
    )


def build_server() -> WeftMCPServer:
    from weft.mcp.verifier import ConnectionTokenVerifier

    verifier = ConnectionTokenVerifier()
    server = WeftMCPServer(
        name="Weft",
        title="Weft task board",
        instructions=INSTRUCTIONS,
        website_url=settings.WEFT_BASE_URL,
        version="1.0.0",
        token_verifier=verifier,
        auth=AuthSettings(
            # Strings, not AnyHttpUrl(...): AuthSettings keeps a path-less issuer exact (no
            # trailing slash), which RFC 8414 issuer comparison needs.
            issuer_url=settings.WEFT_BASE_URL,  # type: ignore[arg-type]
            resource_server_url=settings.WEFT_MCP_URL,  # type: ignore[arg-type]
            required_scopes=["mcp"],
            validate_token_resource=True,
        ),
    )
    if not settings.WEFT_MCP_TRACING:
        # The SDK opens a span per message whether or not anything exports it; its own
        # documentation has a server drop the middleware to opt out.
        server.middleware[:] = [m for m in server.middleware if not isinstance(m, OpenTelemetryMiddleware)]
    from boards.mcp_tools import register as register_board_tools
    from hooks.mcp_tools import register as register_hook_tools
    from issues.mcp_tools import register as register_issue_tools

    # The benchmark's no-op tool exists only when the benchmark starts the server.
    register_board_tools(server, with_noop=os.environ.get("WEFT_MCP_BENCH_NOOP") == "1")
    register_hook_tools(server)
    register_issue_tools(server)
    server.verifier = verifier
    return server


def _origin_regex(origins: list[str]) -> str:
    """Starlette's CORS origin pattern for our allow-list (`:*` = any port)."""
    parts = []
    for origin in origins:
        if origin.endswith(":*"):
            parts.append(re.escape(origin[:-2]) + r":\d+")
        else:
            parts.append(re.escape(origin))
    return "^(" + "|".join(parts) + ")$"


def _with_test_token(app: ASGIApp, token: str) -> ASGIApp:
    """Test-only (WEFT_MCP_TEST_TOKEN, debug mode): requests without credentials carry the fixed token.

    Lets clients that cannot sign in, such as the MCP conformance suite, reach the endpoint.
    """

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and not any(k == b"authorization" for k, _ in scope["headers"]):
            scope = {**scope, "headers": [*scope["headers"], (b"authorization", f"Bearer {token}".encode())]}
        await app(scope, receive, send)

    return wrapped


def mcp_asgi_app() -> ASGIApp:
    """The ASGI app for /api/mcp and /.well-known/oauth-protected-resource/api/mcp."""
    server = build_server()
    app: ASGIApp = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        stateless_http=True,
        json_response=True,
        transport_security=TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=list(settings.WEFT_MCP_ALLOWED_HOSTS),
            allowed_origins=list(settings.WEFT_MCP_ALLOWED_ORIGINS),
        ),
    )
    # The agents' calls skip the SDK's per-request session transport and, once their token is
    # checked as the SDK checks it, the Starlette stack in front of it (weft.mcp.exchange).
    exchange = None
    if settings.WEFT_MCP_SINGLE_EXCHANGE:
        reads_context = any(tool.context_kwarg for tool in server._tool_manager.list_tools())
        exchange = single_exchange(server.session_manager, tools_read_context=reads_context)
    if settings.WEFT_MCP_TEST_TOKEN:
        app = _with_test_token(app, settings.WEFT_MCP_TEST_TOKEN)
    app = capturing_client_info(app)
    if exchange is not None:
        # The backend the SDK's stack authenticates with (build_server's AuthSettings).
        auth = server.settings.auth
        assert auth is not None and auth.validate_token_resource
        backend = _TokenBackend(server.verifier, resource_server_url=auth.resource_server_url)
        app = AheadOfMiddleware(app, exchange, backend, list(auth.required_scopes or []), MCP_PATH)
    app = answering_failures(app)
    # Browser-based MCP clients: the same origins the transport security admits.
    return CORSMiddleware(
        app,
        allow_origin_regex=_origin_regex(list(settings.WEFT_MCP_ALLOWED_ORIGINS)),
        allow_methods=["GET", "POST", "DELETE", "OPTIONS"],
        allow_headers=[
            "authorization",
            "content-type",
            "mcp-protocol-version",
            "mcp-session-id",
            "last-event-id",
        ],
        expose_headers=["mcp-session-id", "mcp-protocol-version", "www-authenticate"],
        max_age=600,
    )
