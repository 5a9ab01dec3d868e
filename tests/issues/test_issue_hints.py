"""Hint audit of the issue tools: each success and refusal keeps the five rules, and every hinted call
(Next:, Fix:, the call of a Wait:) is run at once and accepted.

`audit_issue_tools(mcp, suspended)` runs inside the audit session of tests/mcp/test_hint_audit.py
too, so that audit reaches every tool of tools/list.
"""

from __future__ import annotations

import asyncio

import pytest

from tests.mcp.conftest import AUDIT, EXECUTED
from tests.mcp.harness import MCP, agent_token, in_process
from tests.mcp.test_hint_audit import MISSING, audit

pytestmark = pytest.mark.django_db(transaction=True)

ISSUE_TOOLS = {"submit_issue", "add_issue_message", "get_issue_status"}
REPORT = {"title": "Hint audit issue", "body": "Filed by the hint audit.", "kind": "enhancement"}


async def audit_issue_tools(mcp: MCP, suspended: MCP) -> None:
    """Success and error paths of submit_issue, add_issue_message and get_issue_status."""
    call = mcp.call
    filed = await call("submit_issue", {**REPORT, "reporter_app_version": "1.0.0"})
    await audit(mcp, "submit_issue", filed, error=False)
    issue_id = filed["structuredContent"]["issue"]["id"]
    guest = filed["structuredContent"]["guestToken"]
    added = await call(
        "add_issue_message", {"id": issue_id, "body": "More detail.", "reporter_git_sha": "1a2b3c4"}
    )
    await audit(mcp, "add_issue_message", added, error=False)
    unbuilt = await call("add_issue_message", {"id": issue_id, "body": "No build this time."})
    await audit(mcp, "add_issue_message", unbuilt, error=False)
    await audit(mcp, "get_issue_status", await call("get_issue_status", {"id": issue_id}), error=False)
    read = await call("get_issue_status", {"id": issue_id, "guest_token": guest})
    await audit(mcp, "get_issue_status", read, error=False)
    # Refusals: no build (fixed by naming it), a bad link (fixed by leaving it out), a closed
    # workspace (fixed by leaving it out), a missing issue, a token that names nothing.
    await audit(mcp, "submit_issue", await call("submit_issue", REPORT), error=True)
    bad_link = {**REPORT, "reporter_app_version": "1.0.0", "entity_ids_to_link": [f"task:{MISSING}"]}
    await audit(mcp, "submit_issue", await call("submit_issue", bad_link), error=True)
    closed = {**REPORT, "reporter_app_version": "1.0.0", "workspace": "no-such-workspace"}
    await audit(mcp, "submit_issue", await call("submit_issue", closed), error=True)
    missing = await call("add_issue_message", {"id": MISSING, "body": "x"})
    await audit(mcp, "add_issue_message", missing, error=True)
    await audit(mcp, "get_issue_status", await call("get_issue_status", {"id": MISSING}), error=True)
    bad_token = await call("get_issue_status", {"id": issue_id, "guest_token": "wgt_0"})
    await audit(mcp, "get_issue_status", bad_token, error=True)
    await audit(suspended, "submit_issue", await suspended.call("submit_issue", REPORT), error=True)


async def _session(token: str, suspended_token: str) -> None:
    async with in_process() as client:
        await audit_issue_tools(MCP(client, token), MCP(client, suspended_token))


def test_the_issue_tools_keep_the_hint_contract(alice, carol, ws_a, ws_b):
    token, _ = agent_token(alice, ws_a)
    suspended_token, _ = agent_token(carol, ws_b)
    ws_b.is_suspended = True
    ws_b.save(update_fields=["is_suspended"])
    asyncio.run(_session(token, suspended_token))
    for tool in ISSUE_TOOLS:
        assert {"success", "error"} <= AUDIT[tool], (tool, AUDIT[tool])
        assert EXECUTED[tool], f"{tool}: no hint was run"
