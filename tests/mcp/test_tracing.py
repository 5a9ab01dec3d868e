"""The MCP SDK's OpenTelemetry span per message is off unless WEFT_MCP_TRACING asks for it."""

from __future__ import annotations

from typing import Any

from mcp.server._otel import OpenTelemetryMiddleware
from mcp.server.request_state import RequestStateBoundary

from weft.mcp.server import build_server


def _kinds(settings: Any, tracing: bool) -> list[type]:
    settings.WEFT_MCP_TRACING = tracing
    return [type(m) for m in build_server().middleware]


def test_no_span_per_message_by_default(settings: Any) -> None:
    kinds = _kinds(settings, tracing=False)
    assert OpenTelemetryMiddleware not in kinds
    assert RequestStateBoundary in kinds  # the SDK's other built-in stays


def test_tracing_keeps_the_sdks_span(settings: Any) -> None:
    kinds = _kinds(settings, tracing=True)
    assert kinds.count(OpenTelemetryMiddleware) == 1
    assert kinds.index(OpenTelemetryMiddleware) == 0  # outermost, as the SDK puts it
