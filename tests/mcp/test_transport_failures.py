"""A failure before any tool runs (the token check meeting a lost database) still keeps the contract."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from django.db import OperationalError

from tests.mcp.harness import MCP, agent_token, in_process
from weft.hints import problems

pytestmark = pytest.mark.django_db(transaction=True)


def _answer(token: str) -> tuple[int, dict[str, Any], dict[str, str]]:
    async def run() -> tuple[int, dict[str, Any], dict[str, str]]:
        async with in_process() as client:
            response = await MCP(client, token).post("tools/call", {"name": "get_my_work", "arguments": {}})
            return response.status_code, response.json(), dict(response.headers)

    return asyncio.run(run())


@pytest.mark.parametrize(
    ("exc", "status", "code"),
    [
        (OperationalError("server closed the connection"), 503, "unavailable"),
        (KeyError("x"), 500, "internal_error"),
    ],
)
def test_it_answers_a_failing_token_check_with_a_code_and_a_wait_line(
    alice, ws_a, monkeypatch, exc, status, code
):
    token, _ = agent_token(alice, ws_a)

    def failing(raw: str) -> Any:
        raise exc

    monkeypatch.setattr("weft.mcp.verifier.verify", failing)
    got, body, headers = _answer(token)
    assert got == status, body
    error = body["error"]
    assert error["data"]["error"]["code"] == code
    assert error["data"]["_next_action"].startswith("Wait: ")
    assert not problems(error["message"], error["data"]), error
    if status == 503:
        assert headers["retry-after"] == "5"
