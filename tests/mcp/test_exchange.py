"""An agent's `tools/call` answered as one exchange (weft.mcp.exchange) is the SDK's answer, byte for byte.

Every request below goes to a server with the exchange and to one without it (the SDK's own
stateless transport for every request); status, headers and body must be the same. The
well-formed `tools/call` requests must have been answered by the exchange, everything else
by the SDK.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from django.test import override_settings
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from tests.mcp.harness import ACCEPT, PROTOCOL, agent_token, in_process
from weft.mcp import exchange

pytestmark = pytest.mark.django_db(transaction=True)


def _call(name: str, arguments: Any = None, *, id: Any = 7) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}


# (what, body, header overrides, answered by the exchange)
CASES: list[tuple[str, Any, dict[str, str], bool]] = [
    ("a read", _call("get_my_work", {}), {}, True),
    ("a foreign id", _call("get_task", {"id": 987654321}), {}, True),
    ("a string request id", _call("get_task", {"id": 987654321}, id="req-1"), {}, True),
    ("an unknown tool", _call("no_such_tool", {}), {}, True),
    ("a wrong argument type", _call("start_task", {"id": "seven"}), {}, True),
    ("no arguments", _call("get_my_work"), {}, True),
    ("a NUL byte", _call("create_task", {"title": "a\u0000b"}), {}, True),
    ("no name", {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {}}, {}, True),
    ("no params", {"jsonrpc": "2.0", "id": 3, "method": "tools/call"}, {}, True),
    (
        "a name not a string",
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": 5}},
        {},
        True,
    ),
    (
        "arguments a list",
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "get_my_work", "arguments": [1]},
        },
        {},
        True,
    ),
    (
        "arguments null",
        _call("get_my_work", None) | {"params": {"name": "get_my_work", "arguments": None}},
        {},
        True,
    ),
    (
        "params with _meta",
        _call("get_my_work", {})
        | {"params": {"name": "get_my_work", "arguments": {}, "_meta": {"progressToken": 1}}},
        {},
        True,
    ),
    ("the oldest version", _call("get_my_work", {}), {"mcp-protocol-version": "2024-11-05"}, True),
    ("no version header", _call("get_task", {"id": 1}), {"mcp-protocol-version": ""}, True),
    ("an older version", _call("get_task", {"id": 1}), {"mcp-protocol-version": "2025-03-26"}, True),
    (
        "charset in content type",
        _call("get_task", {"id": 1}),
        {"content-type": "application/json; charset=utf-8"},
        True,
    ),
    ("a huge argument id", _call("get_task", {"id": 10**30}), {}, True),
    ("a huge string", _call("get_task", {"id": "x" * 100_000}), {}, True),
    ("a huge request id", _call("get_task", {"id": 1}, id=10**30), {}, True),
    ("a near-JSON content type", _call("get_task", {"id": 1}), {"content-type": "application/jsonx"}, False),
    ("params a list", {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": [1]}, {}, False),
    ("jsonrpc 1.0", {**_call("get_my_work", {}), "jsonrpc": "1.0"}, {}, False),
    ("a null id", _call("get_my_work", {}, id=None), {}, False),
    (
        "a notification",
        {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "get_my_work"}},
        {},
        False,
    ),
    ("a batch", [_call("get_my_work", {})], {}, False),
    ("tools/list", {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}, {}, False),
    ("ping", {"jsonrpc": "2.0", "id": 1, "method": "ping"}, {}, False),
    ("not JSON", b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call"', {}, False),
    ("JSON text/plain", _call("get_my_work", {}), {"content-type": "text/plain"}, False),
    ("accepts only SSE", _call("get_my_work", {}), {"accept": "text/event-stream"}, False),
    ("a modern version", _call("get_my_work", {}), {"mcp-protocol-version": "2026-07-28"}, False),
    ("an unknown version", _call("get_my_work", {}), {"mcp-protocol-version": "1999-01-01"}, False),
    ("a foreign Host", _call("get_my_work", {}), {"host": "evil.example"}, False),
]


class _Chunked(bytes):
    """A body sent in 64 KiB chunks with no Content-Length: its size is only known once read."""

    async def chunks(self) -> Any:
        for start in range(0, len(self), 65536):
            yield bytes(self[start : start + 65536])


def _padded(body: dict[str, Any], size: int) -> bytes:
    """`body` as JSON of exactly `size` bytes (white space before the closing brace)."""
    text = json.dumps(body).encode()
    return text[:-1] + b" " * (size - len(text)) + b"}"


def _plain(body: Any) -> bool:
    params = body.get("params") if isinstance(body, dict) else None
    return (
        isinstance(params, dict)
        and set(params) <= {"name", "arguments"}
        and isinstance(params.get("name"), str)
        and isinstance(params.get("arguments") or {}, dict)
    )


def _answers(token: str, counted: list[str]) -> list[tuple[int, dict[str, str], bytes]]:
    async def run() -> list[tuple[int, dict[str, str], bytes]]:
        out = []
        async with in_process() as client:
            for what, body, extra, _ in CASES:
                headers = {
                    "accept": ACCEPT,
                    "content-type": "application/json",
                    "mcp-protocol-version": PROTOCOL,
                    "authorization": f"Bearer {token}",
                    **extra,
                }
                headers = {k: v for k, v in headers.items() if v}
                content = body if isinstance(body, bytes) else json.dumps(body).encode()
                counted.append(what)
                response = await client.post("/api/mcp", content=content, headers=headers)
                kept = {k: v for k, v in response.headers.items() if k not in {"date", "content-length"}}
                out.append((response.status_code, kept, response.content))
        return out

    return asyncio.run(run())


def test_the_exchange_answers_as_the_sdk_would(alice, ws_a, monkeypatch):
    token, _ = agent_token(alice, ws_a)
    taken: list[str] = []
    kernel: list[str] = []
    current: list[str] = []
    answer, serve_one = exchange._Exchange._answer, exchange.serve_one

    async def spied(*args: Any, **kwargs: Any) -> Any:
        taken.append(current[-1])
        return await answer(*args, **kwargs)

    async def spied_kernel(*args: Any, **kwargs: Any) -> Any:
        kernel.append(current[-1])
        return await serve_one(*args, **kwargs)

    monkeypatch.setattr(exchange._Exchange, "_answer", spied)
    monkeypatch.setattr(exchange, "serve_one", spied_kernel)
    with override_settings(WEFT_MCP_SINGLE_EXCHANGE=False):
        sdk = _answers(token, current)
    assert taken == [], "with the exchange off, no request may reach it"
    ours = _answers(token, current)

    assert taken == [what for what, _, _, fast in CASES if fast]
    # A plain call (a name and arguments) skips the kernel's set-up; the others go through it.
    assert kernel == [what for what, body, _, fast in CASES if fast and not _plain(body)]
    assert len(kernel) < len(taken)
    for (what, *_), theirs, mine in zip(CASES, sdk, ours, strict=True):
        assert mine == theirs, what
    # The cases say something: the SDK answered them as expected (a JSON result, an error, a refusal).
    statuses = {what: answer[0] for (what, *_), answer in zip(CASES, sdk, strict=True)}
    assert statuses["a read"] == 200
    assert json.loads(sdk[0][2])["result"]["structuredContent"]["_next_action"]
    assert statuses["JSON text/plain"] == 400  # the transport security check refuses it first
    assert statuses["accepts only SSE"] == 406
    assert statuses["a foreign Host"] == 421
    by_case = dict(zip(statuses, ours, strict=True))
    assert json.loads(by_case["no name"][2])["error"]["code"] == -32602
    for extreme in ("a huge argument id", "a huge string", "a NUL byte", "a foreign id"):
        result = json.loads(by_case[extreme][2])["result"]
        assert result["isError"], extreme
        assert result["structuredContent"]["error"]["code"], extreme
        assert result["structuredContent"]["_next_action"].startswith(("Fix: ", "Next: ", "Wait: ")), extreme


# Requests the exchange in front of the Starlette stack must leave to it: (what, token, headers,
# path, body, answered by the exchange). The token is the test's live one unless named.
LIMIT = DEFAULT_MAX_REQUEST_BODY_SIZE  # the SDK's request-body limit, which the stack applies
FRONT: list[tuple[str, str, dict[str, str], str, Any, bool]] = [
    ("a live token", "live", {}, "/api/mcp", _call("get_my_work", {}), True),
    ("no token", "none", {}, "/api/mcp", _call("get_my_work", {}), False),
    ("an unknown token", "unknown", {}, "/api/mcp", _call("get_my_work", {}), False),
    ("an expired token", "expired", {}, "/api/mcp", _call("get_my_work", {}), False),
    ("a token for another resource", "elsewhere", {}, "/api/mcp", _call("get_my_work", {}), False),
    ("a token without the mcp scope", "unscoped", {}, "/api/mcp", _call("get_my_work", {}), False),
    ("a Basic credential", "basic", {}, "/api/mcp", _call("get_my_work", {}), False),
    ("a trailing slash", "live", {}, "/api/mcp/", _call("get_my_work", {}), False),
    (
        "an allowed Origin",
        "live",
        {"origin": "http://localhost:6274"},
        "/api/mcp",
        _call("get_my_work", {}),
        True,
    ),
    (
        "a foreign Origin",
        "live",
        {"origin": "https://evil.example"},
        "/api/mcp",
        _call("get_my_work", {}),
        False,
    ),
    ("a body over the limit", "live", {}, "/api/mcp", b"{" + b" " * LIMIT + b"}", False),
    ("a body at the limit", "live", {}, "/api/mcp", _padded(_call("get_my_work", {}), LIMIT), True),
    (
        "a chunked body over the limit",
        "live",
        {},
        "/api/mcp",
        _Chunked(_padded(_call("get_my_work", {}), LIMIT + 1)),
        False,
    ),
    (
        "a chunked body at the limit",
        "live",
        {},
        "/api/mcp",
        _Chunked(_padded(_call("get_my_work", {}), LIMIT)),
        True,
    ),
    (
        "initialize",
        "live",
        {},
        "/api/mcp",
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "front", "version": "1"},
            },
        },
        False,
    ),
    ("tools/list", "live", {}, "/api/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, False),
]


def _tokens(alice: Any, ws_a: Any) -> dict[str, str | None]:
    from datetime import timedelta

    from django.utils import timezone
    from oauth2_provider.models import AccessToken

    live, _ = agent_token(alice, ws_a)
    expired, _ = agent_token(alice, ws_a, name="Expired")
    AccessToken.objects.filter(application__name="Expired").update(
        expires=timezone.now() - timedelta(seconds=1)
    )
    elsewhere, _ = agent_token(alice, ws_a, resource=["https://elsewhere.example/api/mcp"], name="Elsewhere")
    unscoped, _ = agent_token(alice, ws_a, scope="offline_access", name="Unscoped")
    return {
        "live": f"Bearer {live}",
        "none": None,
        "unknown": "Bearer not-a-token",
        "expired": f"Bearer {expired}",
        "elsewhere": f"Bearer {elsewhere}",
        "unscoped": f"Bearer {unscoped}",
        "basic": "Basic dXNlcjpwYXNz",
    }


def _front_answers(
    tokens: dict[str, str | None], counted: list[str]
) -> list[tuple[int, dict[str, str], bytes]]:
    async def run() -> list[tuple[int, dict[str, str], bytes]]:
        out = []
        async with in_process() as client:
            for what, token, extra, path, body, _ in FRONT:
                headers = {
                    "accept": ACCEPT,
                    "content-type": "application/json",
                    "mcp-protocol-version": PROTOCOL,
                    "authorization": tokens[token] or "",
                    **extra,
                }
                headers = {k: v for k, v in headers.items() if v}
                content = body if isinstance(body, bytes) else json.dumps(body).encode()
                if isinstance(body, _Chunked):
                    content = body.chunks()
                counted.append(what)
                response = await client.post(path, content=content, headers=headers)
                kept = {k: v for k, v in response.headers.items() if k not in {"date", "content-length"}}
                out.append((response.status_code, kept, response.content))
        return out

    return asyncio.run(run())


def test_the_exchange_ahead_of_the_middleware_leaves_the_rest_to_it(alice, ws_a, monkeypatch):
    """Ahead of the Starlette stack, the exchange takes an authenticated call only: every other
    request is answered by the stack as before (401, 403, 413, CORS, redirects), byte for byte."""
    tokens = _tokens(alice, ws_a)
    ahead: list[str] = []
    current: list[str] = []
    serve = exchange._Exchange.serve

    async def spied(self: Any, scope: Any, receive: Any, send: Any, fallback: Any, body: Any = None) -> Any:
        if body is not None:  # the exchange ahead of the stack hands over the body it read
            ahead.append(current[-1])
        return await serve(self, scope, receive, send, fallback, body)

    monkeypatch.setattr(exchange._Exchange, "serve", spied)
    with override_settings(WEFT_MCP_SINGLE_EXCHANGE=False):
        sdk = _front_answers(tokens, current)
    assert ahead == []
    ours = _front_answers(tokens, current)

    authenticated = {"a live token", "an allowed Origin", "a foreign Origin", "a body at the limit",
                     "a chunked body at the limit", "initialize", "tools/list"}  # fmt: skip
    assert ahead == [what for what, *_ in FRONT if what in authenticated]
    for (what, *_), theirs, mine in zip(FRONT, sdk, ours, strict=True):
        assert mine == theirs, what
    statuses = {what: answer[0] for (what, *_), answer in zip(FRONT, sdk, strict=True)}
    assert statuses == {
        "a live token": 200,
        "no token": 401,
        "an unknown token": 401,
        "an expired token": 401,
        "a token for another resource": 401,
        "a token without the mcp scope": 403,
        "a Basic credential": 401,
        "a trailing slash": 307,
        "an allowed Origin": 200,
        "a foreign Origin": 403,
        "a body over the limit": 413,
        "a body at the limit": 200,
        "a chunked body over the limit": 413,
        "a chunked body at the limit": 200,
        "initialize": 200,
        "tools/list": 200,
    }
    by_case = dict(zip(statuses, ours, strict=True))
    assert by_case["an allowed Origin"][1]["access-control-allow-origin"] == "http://localhost:6274"


def test_the_exchange_ahead_of_the_stack_gets_the_body_then_the_rest_of_the_stream():
    """The body read whole goes to the exchange as `body`; its receive then gives what follows the
    body on the stream (here a disconnect), not the body's chunks a second time."""
    from starlette.authentication import AuthCredentials, SimpleUser

    stream: list[dict[str, Any]] = [
        {"type": "http.request", "body": b'{"a"', "more_body": True},
        {"type": "http.request", "body": b": 1}", "more_body": False},
        {"type": "http.disconnect"},
    ]
    got: dict[str, Any] = {}

    async def receive() -> dict[str, Any]:
        return stream.pop(0)

    class Exchange:
        limit = 100

        async def serve(self, scope: Any, receive: Any, send: Any, fallback: Any, body: Any = None) -> None:
            got["body"], got["next"] = body, await receive()

    class Backend:
        async def authenticate(self, conn: Any) -> Any:
            return AuthCredentials(["mcp"]), SimpleUser("agent")

    front = exchange.AheadOfMiddleware(None, Exchange(), Backend(), ["mcp"], "/api/mcp")  # type: ignore[arg-type]
    headers = [(b"authorization", b"Bearer t")]
    scope = {"type": "http", "method": "POST", "path": "/api/mcp", "headers": headers}
    asyncio.run(front(scope, receive, None))  # type: ignore[arg-type]
    assert got == {"body": b'{"a": 1}', "next": {"type": "http.disconnect"}}


def test_text_results_are_written_directly_for_every_handshake_version():
    """The direct dump of a text result matches the SDK's for every version an agent may speak, so
    no version falls back to the SDK's dump and validation unnoticed."""
    assert exchange._text_result_versions() == set(HANDSHAKE_PROTOCOL_VERSIONS)


@pytest.mark.parametrize("token", [None, "not-a-token"])
def test_a_tools_call_without_a_live_token_is_refused_before_the_exchange(ws_a, monkeypatch, token):
    reached: list[object] = []

    async def spied(*args: Any, **kwargs: Any) -> Any:
        reached.append(args)
        raise AssertionError("the exchange ran a call without a live token")

    monkeypatch.setattr(exchange._Exchange, "_answer", spied)

    async def run() -> Any:
        headers = {"accept": ACCEPT, "content-type": "application/json", "mcp-protocol-version": PROTOCOL}
        if token:
            headers["authorization"] = f"Bearer {token}"
        async with in_process() as client:
            return await client.post("/api/mcp", json=_call("get_my_work", {}), headers=headers)

    response = asyncio.run(run())
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer ")
    assert reached == []


def test_the_fronts_token_backend_remembers_each_resources_answer_apart() -> None:
    from pydantic import AnyHttpUrl

    from weft.mcp.server import _TokenBackend

    backend = _TokenBackend(None, resource_server_url=AnyHttpUrl("https://weft.example/api/mcp"))
    answers = {
        "https://weft.example/api/mcp": True,
        "https://WEFT.example:443/api/mcp/": True,
        "https://elsewhere.example/api/mcp": False,
        "https://weft.example/api/other": False,
        "not a url": False,
        None: False,
    }
    for _ in range(2):  # worked out, then remembered: the same answers in either order
        for resource, issued in [*answers.items(), *reversed(answers.items())]:
            assert backend._issued_for_this_resource(resource) is issued, resource
    for i in range(2 * _TokenBackend.RESOURCES):
        assert backend._issued_for_this_resource(f"https://other-{i}.example/api/mcp") is False
    assert len(backend._issued) == _TokenBackend.RESOURCES
    assert backend._issued_for_this_resource("https://weft.example/api/mcp/") is True
