"""Hint audit: every tool of tools/list, on a success path and an error path, keeps the five rules.

`make audit-hints` runs this with --audit-report and prints per-tool coverage.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.mcp.conftest import AUDIT, AUDIT_TOOLS
from tests.mcp.harness import MCP, agent_token, in_process, text_of
from weft.hints import problems

pytestmark = pytest.mark.django_db(transaction=True)

MISSING = 987654321
NO_RUN = "00000000-0000-4000-8000-000000000000"


def audit(tool: str, result: dict[str, Any], *, error: bool) -> None:
    """Check one response; record it for the coverage report when it keeps the rules."""
    structured = result.get("structuredContent")
    assert structured is not None, f"{tool}: no structuredContent"
    assert bool(result.get("isError")) is error, (tool, text_of(result))
    found = problems(text_of(result), structured)
    assert not found, (tool, found, text_of(result))
    if error:
        assert "Error: " in text_of(result)
        assert structured["_next_action"].startswith(("Fix:", "Wait:"))
        assert structured["error"]["code"]
    AUDIT[tool].add("error" if error else "success")


async def _session(token: str, suspended_token: str) -> None:
    async with in_process() as client:
        mcp = MCP(client, token)
        tools = [t["name"] for t in await mcp.tools()]
        AUDIT_TOOLS.update(tools)
        call = mcp.call

        # Success paths, in the order an agent works.
        audit("get_my_work", await call("get_my_work"), error=False)
        created = await call("create_task", {"title": "Audit the hints", "description": "Check every tool."})
        audit("create_task", created, error=False)
        task_id = created["structuredContent"]["task"]["id"]
        other = await call("create_task", {"title": "A second task"})
        other_id = other["structuredContent"]["task"]["id"]
        audit("get_board_state", await call("get_board_state"), error=False)
        audit("get_task", await call("get_task", {"id": task_id}), error=False)
        audit("search", await call("search", {"query": "Audit"}), error=False)
        audit("update_task", await call("update_task", {"id": task_id, "priority": 2}), error=False)
        started = await call("start_task", {"id": task_id})
        audit("start_task", started, error=False)
        lease = {
            "runId": started["structuredContent"]["runId"],
            "leaseToken": started["structuredContent"]["leaseToken"],
        }
        audit(
            "report_progress", await call("report_progress", {**lease, "note": "Read the code."}), error=False
        )
        asked = await call("request_input", {**lease, "question": "Ship it today?", "options": ["yes", "no"]})
        audit("request_input", asked, error=False)
        done = await call(
            "complete_task",
            {
                **lease,
                "outcome": "Every tool checked.",
                "artifacts": [{"kind": "url", "uri": "https://example.com/report", "httpStatus": 200}],
                "claims": ["all five rules hold"],
                "notDone": [],
                "unknowns": [],
                "nextStep": "",
            },
        )
        audit("complete_task", done, error=False)
        second = await call("start_task", {"id": other_id})
        audit("start_task", second, error=False)
        second_lease = {
            "runId": second["structuredContent"]["runId"],
            "leaseToken": second["structuredContent"]["leaseToken"],
        }
        audit(
            "release_task", await call("release_task", {**second_lease, "reason": "Not mine."}), error=False
        )

        # Error paths: a refusal each tool can meet.
        bad_lease = {"runId": NO_RUN, "leaseToken": "not-the-token"}
        audit("start_task", await call("start_task", {"id": MISSING}), error=True)
        audit("get_task", await call("get_task", {"id": MISSING}), error=True)
        audit("update_task", await call("update_task", {"id": MISSING, "title": "x"}), error=True)
        audit("get_board_state", await call("get_board_state", {"boardId": MISSING}), error=True)
        audit("search", await call("search", {"query": "x", "limit": 0}), error=True)
        audit("create_task", await call("create_task", {"title": ""}), error=True)
        audit("report_progress", await call("report_progress", {**second_lease, "note": "late"}), error=True)
        audit("request_input", await call("request_input", {**bad_lease, "question": "?"}), error=True)
        audit("complete_task", await call("complete_task", {**bad_lease, "outcome": "x"}), error=True)
        audit("release_task", await call("release_task", {**bad_lease, "reason": "x"}), error=True)
        # A suspended workspace refuses every call, get_my_work included.
        suspended = MCP(client, suspended_token)
        audit("get_my_work", await suspended.call("get_my_work"), error=True)
        unknown = await call("no_such_tool")
        assert unknown["isError"] and not problems(text_of(unknown), unknown["structuredContent"])


def test_every_tool_keeps_the_hint_contract(alice, carol, ws_a, ws_b):
    token, _ = agent_token(alice, ws_a)
    suspended_token, _ = agent_token(carol, ws_b)
    ws_b.is_suspended = True
    ws_b.save(update_fields=["is_suspended"])
    asyncio.run(_session(token, suspended_token))
    missing = {tool for tool in AUDIT_TOOLS if {"success", "error"} - AUDIT[tool]}
    assert not missing, f"tools without both paths audited: {sorted(missing)}"
