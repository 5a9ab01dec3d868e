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
    current: list[str] = []
    serve_one = exchange.serve_one

    async def spied(*args: Any, **kwargs: Any) -> Any:
        taken.append(current[-1])
        return await serve_one(*args, **kwargs)

    monkeypatch.setattr(exchange, "serve_one", spied)
    with override_settings(WEFT_MCP_SINGLE_EXCHANGE=False):
        sdk = _answers(token, current)
    assert taken == [], "with the exchange off, no request may reach it"
    ours = _answers(token, current)

    assert taken == [what for what, _, _, fast in CASES if fast]
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


@pytest.mark.parametrize("token", [None, "not-a-token"])
def test_a_tools_call_without_a_live_token_is_refused_before_the_exchange(ws_a, monkeypatch, token):
    reached: list[object] = []

    async def spied(*args: Any, **kwargs: Any) -> Any:
        reached.append(args)
        raise AssertionError("the exchange ran a call without a live token")

    monkeypatch.setattr(exchange, "serve_one", spied)

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
