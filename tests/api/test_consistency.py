"""Every MCP tool and its REST endpoint, called in the same state, answer the same payload and the
same next action (the REST hint names the same tool with the same arguments).

One connection, one token, both surfaces: reads run back to back on one state; writes run on twin
objects made the same way (one for MCP, one for REST), and their answers are compared with the
ids, tokens and times that differ between twins left out. The table must cover tools/list.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from tests.api.harness import AsyncApi, rest_call
from tests.mcp.harness import MCP, agent_token, in_process

pytestmark = pytest.mark.django_db(transaction=True)

# Values that differ between twins (or between two reads a moment apart).
VOLATILE = {
    "id",
    "taskId",
    "runId",
    "leaseToken",
    "leaseExpiresAt",
    "createdAt",
    "updatedAt",
    "position",
    "questionId",
    "inboxItemId",
    "secret",
    "guestToken",
    "guestTokenExpiresAt",
    "at",
    "startedAt",
    "endedAt",
    "lastHeartbeatAt",
    "epoch",
    "oldestAgeSeconds",
    "title",
    "askedAt",
    "expiresAt",
    "itemId",
}
DIGITS = re.compile(r"\d+|[0-9a-f]{8}-[0-9a-f-]{27}|[0-9a-f]{32,}")


def normal(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: "*" if k in VOLATILE else normal(v)
            for k, v in value.items()
            if k not in ("_next_action", "_or_action")
        }
    if isinstance(value, list):
        return [normal(v) for v in value]
    if isinstance(value, str):
        return DIGITS.sub("N", value)
    return value


def _split(line: str) -> tuple[str, str, str]:
    """A marker line as (marker, the Wait: condition, the call's text)."""
    if line == "Done.":
        return "Done", "", ""
    marker, _, body = line.partition(": ")
    if marker != "Wait":
        return marker, "", body
    if "; check again with " not in body:
        return marker, body, ""
    condition, _, call = body.rpartition("; check again with ")
    return marker, condition, call


def mcp_meaning(line: str) -> tuple[str, Any, str | None, Any]:
    marker, condition, call = _split(line)
    tool, _, args = call.partition(" ")
    return marker, normal(condition), tool or None, normal(json.loads(args)) if args else None


def rest_meaning(line: str) -> tuple[str, Any, str | None, Any]:
    marker, condition, text = _split(line)
    call = rest_call(text) if text else None
    if call is None:
        return marker, normal(condition), None, None
    tool, args = call.tool()
    return marker, normal(condition), tool, normal({k: _typed(v) for k, v in args.items()})


def _typed(value: Any) -> Any:
    """A path or query value as the JSON value it stands for ("12" → 12)."""
    return int(value) if isinstance(value, str) and value.isdigit() else value


Pair = Callable[["Twins"], Awaitable[tuple[dict[str, Any], dict[str, Any]]]]


REPORT = {
    "title": "The board is slow",
    "body": "get_board_state takes 4 s.",
    "kind": "performance",
    "reporter_app_version": "1.4.2",
}


class Twins:
    def __init__(self, mcp: MCP, rest: AsyncApi) -> None:
        self.mcp, self.rest = mcp, rest

    async def both(
        self, tool: str, args: dict[str, Any], method: str, path: str, body: Any = None
    ) -> tuple[Any, Any]:
        by_mcp = (await self.mcp.call(tool, args))["structuredContent"]
        by_rest = (await self.rest.call(method, path, body)).json()
        return by_mcp, by_rest

    async def task(self, title: str) -> int:
        made = await self.mcp.call("create_task", {"title": title, "description": "twin"})
        return int(made["structuredContent"]["task"]["id"])

    async def issue(self) -> int:
        filed = await self.mcp.call("submit_issue", REPORT)
        return int(filed["structuredContent"]["issue"]["id"])

    async def tasks(self) -> tuple[int, int]:
        return await self.task("Twin"), await self.task("Twin")

    async def started(self) -> tuple[dict[str, Any], dict[str, Any]]:
        a, b = await self.tasks()
        first = (await self.mcp.call("start_task", {"id": a}))["structuredContent"]
        second = (await self.mcp.call("start_task", {"id": b}))["structuredContent"]
        return first, second


def lease(claim: dict[str, Any]) -> dict[str, Any]:
    return {"leaseToken": claim["leaseToken"]}


async def _writes(t: Twins, tool: str) -> tuple[Any, Any]:
    """The write tools, each on its twins."""
    if tool == "create_task":
        return await t.both("create_task", {"title": "Twin"}, "POST", "tasks", {"title": "Twin"})
    if tool in ("update_task", "start_task"):
        a, b = await t.tasks()
        if tool == "update_task":
            return await t.both(
                "update_task", {"id": a, "priority": 2}, "PATCH", f"tasks/{b}", {"priority": 2}
            )
        return await t.both("start_task", {"id": a}, "POST", f"tasks/{b}/start")
    if tool in ("subscribe", "unsubscribe"):
        # Twin URLs (a retried subscribe of one URL and filter is refused as a conflict); their
        # digits compare equal.
        one, two = (
            {"url": f"https://hooks.example.com/{tool}/{n}", "eventTypes": ["task.created"]} for n in (1, 2)
        )
        if tool == "subscribe":
            return await t.both("subscribe", one, "POST", "subscriptions", two)
        a = (await t.mcp.call("subscribe", one))["structuredContent"]["subscription"]["id"]
        b = (await t.mcp.call("subscribe", two))["structuredContent"]["subscription"]["id"]
        return await t.both("unsubscribe", {"id": a}, "DELETE", f"subscriptions/{b}")
    if tool == "triage_issue":
        a, b = await t.issue(), await t.issue()
        ask = {"action": "ask", "body": "Which board?"}
        return await t.both("triage_issue", {"id": a, **ask}, "POST", f"issues/{b}/triage", ask)
    if tool in ("submit_issue", "add_issue_message"):
        if tool == "submit_issue":
            return await t.both("submit_issue", REPORT, "POST", "issues", REPORT)
        a, b = await t.issue(), await t.issue()
        detail = {"body": "Also on 1.4.3.", "reporter_app_version": "1.4.3"}
        return await t.both("add_issue_message", {"id": a, **detail}, "POST", f"issues/{b}/messages", detail)
    one, two = await t.started()
    path = {
        "report_progress": "heartbeat",
        "request_input": "ask",
        "complete_task": "complete",
        "release_task": "release",
    }[tool]
    extras: dict[str, dict[str, Any]] = {
        "report_progress": {"note": "Read the code."},
        "request_input": {"question": "Ship it today?", "options": ["yes", "no"]},
        "complete_task": {"outcome": "Done.", "claims": ["it works"]},
        "release_task": {"reason": "Not mine."},
    }
    extra = extras[tool]
    return await t.both(
        tool,
        {"runId": one["runId"], **lease(one), **extra},
        "POST",
        f"runs/{two['runId']}/{path}",
        {**lease(two), **extra},
    )


async def _reads(t: Twins, tool: str) -> tuple[Any, Any]:
    """The read tools, back to back on one state."""
    task_id = await t.task("Read me")
    calls: dict[str, tuple[dict[str, Any], str, str, Any]] = {
        "get_my_work": ({}, "GET", "work", None),
        "get_board_state": ({}, "GET", "board", None),
        "get_task": ({"id": task_id}, "GET", f"tasks/{task_id}", None),
        "search": ({"query": "Read"}, "GET", "tasks/search", {"query": "Read"}),
        "list_subscriptions": ({}, "GET", "subscriptions", None),
        "list_issues": ({"kind": "performance"}, "GET", "issues", {"kind": "performance"}),
    }
    if tool == "get_issue_status":
        issue_id = await t.issue()
        calls[tool] = ({"id": issue_id}, "GET", f"issues/{issue_id}", None)
    args, method, path, body = calls[tool]
    return await t.both(tool, args, method, path, body)


READS = {
    "get_my_work",
    "get_board_state",
    "get_task",
    "search",
    "list_subscriptions",
    "get_issue_status",
    "list_issues",
}
WRITES = {
    "create_task",
    "update_task",
    "start_task",
    "report_progress",
    "request_input",
    "complete_task",
    "release_task",
    "subscribe",
    "unsubscribe",
    "submit_issue",
    "add_issue_message",
    "triage_issue",
}


async def _session(token: str) -> list[str]:
    async with in_process() as client:
        mcp, rest = MCP(client, token), AsyncApi(client, token)
        listed = {tool["name"] for tool in await mcp.tools()}
        assert listed == READS | WRITES, (
            f"tools without a consistency pair: {sorted(listed ^ (READS | WRITES))}"
        )
        checked = []
        for tool in sorted(listed):
            t = Twins(mcp, rest)
            by_mcp, by_rest = await (_reads(t, tool) if tool in READS else _writes(t, tool))
            assert "error" not in by_mcp, (tool, by_mcp)
            assert normal(by_mcp) == normal(by_rest), tool
            assert mcp_meaning(by_mcp["_next_action"]) == rest_meaning(by_rest["_next_action"]), (
                tool,
                by_mcp["_next_action"],
                by_rest["_next_action"],
            )
            assert ("_or_action" in by_mcp) == ("_or_action" in by_rest), tool
            checked.append(tool)
        return checked


def test_every_tool_and_its_endpoint_answer_alike(alice, ws_a, public_dns):
    ws_a.plan = type(ws_a.plan).named("pro")
    ws_a.save(update_fields=["plan"])
    token, _ = agent_token(alice, ws_a)
    checked = asyncio.run(_session(token))
    assert len(checked) == len(READS | WRITES)
