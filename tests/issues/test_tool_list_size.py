"""tools/list stays small enough for an agent's context: every tool, as JSON, under 24,000 characters."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.mcp.harness import MCP, agent_token, in_process

pytestmark = pytest.mark.django_db(transaction=True)

LIMIT = 24_000


async def _tools(token: str) -> tuple[list[dict], int]:
    """The tools, and the size of the tools/list answer as it goes over the wire."""
    async with in_process() as client:
        response = await MCP(client, token).post("tools/list")
        return response.json()["result"]["tools"], len(response.text)


def test_tools_list_is_under_its_budget_and_holds_the_issue_tools(alice, ws_a):
    token, _ = agent_token(alice, ws_a)
    tools, wire = asyncio.run(_tools(token))
    size = len(json.dumps(tools, separators=(",", ":")))
    assert size <= wire
    issue_tools = {"submit_issue", "add_issue_message", "get_issue_status", "triage_issue", "list_issues"}
    assert issue_tools <= {t["name"] for t in tools}
    assert size < LIMIT, f"tools/list is {size} characters of JSON"
