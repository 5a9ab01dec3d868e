"""Hint audit: every tool of tools/list, on a success path and an error path, keeps the five rules,
and every hinted call (Next:, Fix:, the call of a Wait:) is run at once in the same session against
the state that produced it: it must not fail with invalid_argument, not_found or lease_lost.

A hinted call that would change the state the rest of the audit needs (a start_task before the
audit's own start) is run on a copy: the situation is made again on a fresh task and the copy's
hint is followed, its claim released after. `make audit-hints` runs this with --audit-report and
prints per-tool coverage of both the rules and the executed hints.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from tests.mcp.conftest import AUDIT, AUDIT_TOOLS, EXECUTED
from tests.mcp.harness import MCP, agent_token, in_process, text_of
from weft import hints
from weft.hints import marker_lines, problems

pytestmark = pytest.mark.django_db(transaction=True)

MISSING = 987654321
NO_RUN = "00000000-0000-4000-8000-000000000000"


# A hinted call must never fail with these: they mean the hint named a wrong call, id or lease.
BROKEN_HINT_CODES = {"invalid_argument", "not_found", "lease_lost"}
# Calls that change nothing the audit relies on; they run at once on the real state.
READS = {"get_my_work", "get_board_state", "get_task", "search", "report_progress"}
Again = Callable[[], Awaitable[dict[str, Any]]]
# The reads an invalid_argument's Fix: may name when the server cannot correct the call.
FIX_READS = {
    "get_my_work",
    "get_board_state",
    "get_task",
    "list_subscriptions",
    "get_issue_status",
    "list_issues",
}


def hinted_calls(text: str) -> list[tuple[str, str, dict[str, Any]]]:
    """The calls a response's marker lines ask for: (marker, tool, arguments).

    Next: and Fix: lines that are calls, and the `check again with <call>` of a Wait: line. An Or:
    line is a fallback for when the Next: call is blocked, so it is not run beside it.
    """
    calls = []
    for line in marker_lines(text):
        marker, _, body = line.partition(": ")
        if marker == "Wait":
            body = body.rpartition("; check again with ")[2] if "; check again with " in body else ""
        elif marker not in ("Next", "Fix"):
            continue
        match = hints._CALL.match(body)
        if match:
            calls.append((marker, match["tool"], json.loads(match["args"])))
    return calls


def _code(result: dict[str, Any]) -> str | None:
    if not result.get("isError"):
        return None
    return (result.get("structuredContent") or {}).get("error", {}).get("code")


async def _run_hint(
    mcp: MCP, owner: str, path: str, marker: str, tool: str, args: dict[str, Any], *, copy: bool = False
) -> None:
    result = await mcp.call(tool, args)
    code = _code(result)
    assert code not in BROKEN_HINT_CODES, (
        f"{owner} ({path}) hinted {marker}: {tool} {json.dumps(args)}, which failed: {text_of(result)}"
    )
    EXECUTED[owner].add(path)
    structured = result.get("structuredContent") or {}
    if copy and "leaseToken" in structured and "runId" in structured:
        # A claim made only to follow a hint on a copy: give it back.
        lease = {"runId": structured["runId"], "leaseToken": structured["leaseToken"]}
        released = await mcp.call("release_task", {**lease, "reason": "hint audit copy"})
        assert not released.get("isError"), text_of(released)


async def follow(mcp: MCP, tool: str, result: dict[str, Any], path: str, again: Again | None) -> None:
    """Run every call the response hints, right now, in the same session."""
    for marker, hinted, args in hinted_calls(text_of(result)):
        if hinted in READS or again is None:
            await _run_hint(mcp, tool, path, marker, hinted, args)
            continue
        copy = await again()
        same = [c for c in hinted_calls(text_of(copy)) if c[0] == marker and c[1] == hinted]
        assert same, f"{tool}: the copy of the situation hints {hinted_calls(text_of(copy))}, not {hinted}"
        await _run_hint(mcp, tool, path, *same[0], copy=True)


async def audit(
    mcp: MCP, tool: str, result: dict[str, Any], *, error: bool, again: Again | None = None
) -> None:
    """Check one response, then run the calls it hints; record both for the coverage report."""
    structured = result.get("structuredContent")
    assert structured is not None, f"{tool}: no structuredContent"
    assert bool(result.get("isError")) is error, (tool, text_of(result))
    found = problems(text_of(result), structured)
    assert not found, (tool, found, text_of(result))
    if error:
        assert "Error: " in text_of(result)
        assert structured["_next_action"].startswith(("Fix:", "Wait:"))
        assert structured["error"]["code"]
        if structured["error"]["code"] == "invalid_argument":
            # The remediation is the failed call corrected, or the read that shows what is valid.
            fixed = hints._CALL.match(structured["_next_action"].removeprefix("Fix: "))
            assert fixed and fixed["tool"] in {tool, *FIX_READS}, (tool, structured["_next_action"])
    path = "error" if error else "success"
    AUDIT[tool].add(path)
    await follow(mcp, tool, result, path, again)


async def _session(token: str, suspended_token: str) -> None:
    from tests.hooks.test_hook_hints import audit_hook_tools
    from tests.issues.test_issue_hints import audit_issue_tools

    async with in_process() as client:
        mcp = MCP(client, token)
        tools = [t["name"] for t in await mcp.tools()]
        AUDIT_TOOLS.update(tools)
        call = mcp.call

        async def copy_task() -> dict[str, Any]:
            return await call("create_task", {"title": "Hint audit copy"})

        async def copy_get() -> dict[str, Any]:
            copied = (await copy_task())["structuredContent"]["task"]["id"]
            return await call("get_task", {"id": copied})

        async def copy_update() -> dict[str, Any]:
            copied = (await copy_task())["structuredContent"]["task"]["id"]
            return await call("update_task", {"id": copied, "priority": 2})

        # Success paths, in the order an agent works.
        await audit(mcp, "get_my_work", await call("get_my_work"), error=False)
        created = await call("create_task", {"title": "Audit the hints", "description": "Check every tool."})
        await audit(mcp, "create_task", created, error=False, again=copy_task)
        task_id = created["structuredContent"]["task"]["id"]
        other = await call("create_task", {"title": "A second task"})
        other_id = other["structuredContent"]["task"]["id"]
        await audit(mcp, "get_board_state", await call("get_board_state"), error=False)
        await audit(mcp, "get_task", await call("get_task", {"id": task_id}), error=False, again=copy_get)
        await audit(mcp, "search", await call("search", {"query": "Audit"}), error=False)
        await audit(
            mcp,
            "update_task",
            await call("update_task", {"id": task_id, "priority": 2}),
            error=False,
            again=copy_update,
        )
        started = await call("start_task", {"id": task_id})
        await audit(mcp, "start_task", started, error=False)
        lease = {
            "runId": started["structuredContent"]["runId"],
            "leaseToken": started["structuredContent"]["leaseToken"],
        }
        await audit(
            mcp,
            "report_progress",
            await call("report_progress", {**lease, "note": "Read the code."}),
            error=False,
        )
        asked = await call("request_input", {**lease, "question": "Ship it today?", "options": ["yes", "no"]})
        await audit(mcp, "request_input", asked, error=False)
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
        await audit(mcp, "complete_task", done, error=False)
        second = await call("start_task", {"id": other_id})
        await audit(mcp, "start_task", second, error=False)
        second_lease = {
            "runId": second["structuredContent"]["runId"],
            "leaseToken": second["structuredContent"]["leaseToken"],
        }
        await audit(
            mcp,
            "release_task",
            await call("release_task", {**second_lease, "reason": "Not mine."}),
            error=False,
        )

        # startNext: the completion's answer carries the next claim and its hint.
        third = await call("start_task", {"id": (await copy_task())["structuredContent"]["task"]["id"]})
        third_lease = {k: third["structuredContent"][k] for k in ("runId", "leaseToken")}
        chained = await call("complete_task", {**third_lease, "outcome": "Done.", "startNext": True})
        await audit(mcp, "complete_task", chained, error=False)
        following = chained["structuredContent"]["next"]
        assert following["started"] is True, text_of(chained)
        released = await call(
            "release_task",
            {"runId": following["runId"], "leaseToken": following["leaseToken"], "reason": "x"},
        )
        assert not released.get("isError"), text_of(released)

        # Error paths: a refusal each tool can meet.
        bad_lease = {"runId": NO_RUN, "leaseToken": "not-the-token"}
        await audit(mcp, "start_task", await call("start_task", {"id": MISSING}), error=True)
        await audit(mcp, "get_task", await call("get_task", {"id": MISSING}), error=True)
        await audit(mcp, "update_task", await call("update_task", {"id": MISSING, "title": "x"}), error=True)
        await audit(mcp, "get_board_state", await call("get_board_state", {"boardId": MISSING}), error=True)
        await audit(mcp, "search", await call("search", {"query": "x", "limit": 0}), error=True)
        await audit(mcp, "create_task", await call("create_task", {"title": ""}), error=True)
        await audit(
            mcp,
            "report_progress",
            await call("report_progress", {**second_lease, "note": "late"}),
            error=True,
        )
        await audit(
            mcp, "request_input", await call("request_input", {**bad_lease, "question": "?"}), error=True
        )
        await audit(
            mcp, "complete_task", await call("complete_task", {**bad_lease, "outcome": "x"}), error=True
        )
        await audit(mcp, "release_task", await call("release_task", {**bad_lease, "reason": "x"}), error=True)
        # A suspended workspace refuses every call, get_my_work included.
        suspended = MCP(client, suspended_token)
        await audit(suspended, "get_my_work", await suspended.call("get_my_work"), error=True)
        await audit_hook_tools(mcp, suspended)
        await audit_issue_tools(mcp, suspended)
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
    unexecuted = {tool for tool in AUDIT_TOOLS if not EXECUTED[tool]}
    assert not unexecuted, f"tools whose hints were never run: {sorted(unexecuted)}"
