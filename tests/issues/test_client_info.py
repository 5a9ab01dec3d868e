"""The MCP client's name and version reach its connection: from initialize's clientInfo, from the
2026-07-28 request _meta, never from a request whose token does not verify, and never by failing it."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from accounts.models import AgentConnection
from tests.mcp.harness import MCP, agent_token, in_process
from weft.mcp.clients import META_KEY, client_info

pytestmark = pytest.mark.django_db(transaction=True)

INIT = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "claude-code", "version": "2.0.14"},
}


def _body(method: str, params: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (_body("initialize", INIT), ("claude-code", "2.0.14")),
        (
            _body("tools/call", {"name": "x", "_meta": {META_KEY: {"name": "cursor", "version": "1.7"}}}),
            ("cursor", "1.7"),
        ),
        (json.dumps([json.loads(_body("initialize", INIT))]).encode(), ("claude-code", "2.0.14")),
        (
            _body("tools/call", {"clientInfo": {"name": "fake", "version": "1"}}),
            None,
        ),  # only initialize's counts
        (_body("initialize", {"clientInfo": {"name": "", "version": "1"}}), None),
        (_body("initialize", {"clientInfo": {"name": "x", "version": 2}}), None),
        (_body("initialize", {"clientInfo": {"name": "a\x00b", "version": " 3 "}}), ("ab", "3")),
        (b"{not json clientInfo", None),
        (b'{"method": "tools/list"}', None),
    ],
)
def test_it_reads_the_clients_name_and_version(body: bytes, expected: tuple[str, str] | None) -> None:
    assert client_info(body) == expected


def test_a_long_name_is_cut_to_its_column() -> None:
    named = client_info(_body("initialize", {"clientInfo": {"name": "n" * 300, "version": "v" * 300}}))
    assert named == ("n" * 100, "v" * 100)


async def _initialize(token: str, params: dict[str, Any]) -> int:
    async with in_process() as client:
        response = await MCP(client, token).post("initialize", params)
        return response.status_code


def test_initialize_stores_the_client_on_the_connection(alice, ws_a):
    token, connection = agent_token(alice, ws_a)
    assert asyncio.run(_initialize(token, INIT)) == 200
    connection.refresh_from_db()
    assert (connection.client_name, connection.client_version) == ("claude-code", "2.0.14")
    again = dict(INIT, clientInfo={"name": "claude-code", "version": "2.0.15"})
    assert asyncio.run(_initialize(token, again)) == 200
    connection.refresh_from_db()
    assert connection.client_version == "2.0.15"


def test_a_token_that_does_not_verify_stores_nothing(alice, ws_a):
    _, connection = agent_token(alice, ws_a)
    assert asyncio.run(_initialize("not-a-token", INIT)) == 401
    assert AgentConnection.objects.get(pk=connection.pk).client_name is None


def test_a_failure_while_storing_does_not_fail_initialize(alice, ws_a, monkeypatch):
    token, connection = agent_token(alice, ws_a)

    def broken(*args: Any) -> None:
        raise RuntimeError("database gone")

    monkeypatch.setattr("weft.mcp.clients._store", broken)
    assert asyncio.run(_initialize(token, INIT)) == 200
    assert AgentConnection.objects.get(pk=connection.pk).client_name is None
