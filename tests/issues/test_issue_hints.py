"""Hint audit of the issue tools: each success and refusal keeps the five rules, and every hinted call
(Next:, Fix:, the call of a Wait:) is run at once and accepted.

`audit_issue_tools(mcp, suspended)` runs inside the audit session of tests/mcp/test_hint_audit.py
too, so that audit reaches every tool of tools/list.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.mcp.conftest import AUDIT, EXECUTED
from tests.mcp.harness import MCP, agent_token, in_process
from tests.mcp.test_hint_audit import MISSING, audit

pytestmark = pytest.mark.django_db(transaction=True)

ISSUE_TOOLS = {"submit_issue", "add_issue_message", "get_issue_status", "triage_issue", "list_issues"}
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
    await audit_triage(mcp, suspended)


async def _filed(mcp: MCP) -> int:
    filed = await mcp.call("submit_issue", {**REPORT, "reporter_app_version": "1.0.0"})
    return int(filed["structuredContent"]["issue"]["id"])


# Each triage action on an issue of its own (the ones that close it leave nothing to triage),
# then what a maintainer's agent can get wrong.
ACTIONS = [
    {"action": "reply", "body": "Thanks, looking."},
    {"action": "ask", "body": "Which board was it?"},
    {"action": "status", "status": "triaged"},
    {"action": "make_task", "body": "Look into the report"},
    {"action": "resolve", "body": "Fixed in 1.0.1."},
    {"action": "close"},
]


async def audit_triage(mcp: MCP, suspended: MCP) -> None:
    """Every action of triage_issue and list_issues, on success and refusal."""
    call = mcp.call
    for args in ACTIONS:
        issue_id = await _filed(mcp)
        await audit(mcp, "triage_issue", await call("triage_issue", {"id": issue_id, **args}), error=False)
    original, copy = await _filed(mcp), await _filed(mcp)
    marked = await call("triage_issue", {"id": copy, "action": "duplicate", "duplicateOf": original})
    await audit(mcp, "triage_issue", marked, error=False)
    await audit(mcp, "list_issues", await call("list_issues", {}), error=False)
    await audit(mcp, "list_issues", await call("list_issues", {"status": "closed", "limit": 1}), error=False)
    # Refusals: a missing issue, a missing argument of each kind, a missing original, a task on a
    # closed issue, a missing board, a task title past its limit, a bad limit, a suspended workspace.
    issue_id = await _filed(mcp)
    refusals: list[dict[str, Any]] = [
        {"id": MISSING, "action": "close"},
        {"id": issue_id, "action": "reply"},
        {"id": issue_id, "action": "duplicate"},
        {"id": issue_id, "action": "status"},
        {"id": issue_id, "action": "duplicate", "duplicateOf": MISSING},
        {"id": issue_id, "action": "make_task", "boardId": MISSING},
        {"id": copy, "action": "make_task"},
        {"id": issue_id, "action": "make_task", "body": "a" * 201},
    ]
    for args in refusals:
        await audit(mcp, "triage_issue", await call("triage_issue", args), error=True)
    await audit(mcp, "list_issues", await call("list_issues", {"limit": 0}), error=True)
    refused = await suspended.call("triage_issue", {"id": issue_id, "action": "close"})
    await audit(suspended, "triage_issue", refused, error=True)


async def audit_a_members_agent(member: MCP, issue_id: int) -> None:
    """A member's agent may read the issue but not triage it or list the triage's issues."""
    refused = await member.call("triage_issue", {"id": issue_id, "action": "reply", "body": "Me too."})
    await audit(member, "triage_issue", refused, error=True)
    await audit(member, "list_issues", await member.call("list_issues", {}), error=True)


async def _session(token: str, suspended_token: str, member_token: str) -> None:
    async with in_process() as client:
        mcp = MCP(client, token)
        await audit_issue_tools(mcp, MCP(client, suspended_token))
        await audit_a_members_agent(MCP(client, member_token), await _filed(mcp))


def test_the_issue_tools_keep_the_hint_contract(alice, bob, carol, ws_a, ws_b):
    token, _ = agent_token(alice, ws_a)
    suspended_token, _ = agent_token(carol, ws_b)
    member_token, _ = agent_token(bob, ws_a)
    ws_b.is_suspended = True
    ws_b.save(update_fields=["is_suspended"])
    asyncio.run(_session(token, suspended_token, member_token))
    for tool in ISSUE_TOOLS:
        assert {"success", "error"} <= AUDIT[tool], (tool, AUDIT[tool])
        assert EXECUTED[tool], f"{tool}: no hint was run"
