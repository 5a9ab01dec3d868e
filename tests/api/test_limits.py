"""Limits at their edge over REST, the same as over MCP (boards/limits.py): the value at the limit
is taken, one past it is refused with the same code, field and corrected call. NUL characters,
bodies that are not JSON objects and huge bodies are refused with a code and a hint."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from boards import limits
from tests.api.harness import AsyncApi
from tests.api.test_consistency import mcp_meaning, rest_meaning
from tests.mcp.harness import MCP, agent_token, in_process

pytestmark = pytest.mark.django_db(transaction=True)

# (tool, field, at the limit, past it)
TASK_EDGES: list[tuple[str, Any, Any]] = [
    ("title", "t" * limits.TITLE, "t" * (limits.TITLE + 1)),
    ("description", "d" * limits.DESCRIPTION, "d" * (limits.DESCRIPTION + 1)),
    ("priority", 3, 4),
    ("estimatedReviewMinutes", limits.REVIEW_MINUTES_MAX, limits.REVIEW_MINUTES_MAX + 1),
    ("dueAt", "2999-12-31T23:59:59Z", "3000-01-01T00:00:00Z"),
]
LEASE_EDGES: list[tuple[str, str, dict[str, Any], str, Any, Any]] = [
    ("report_progress", "heartbeat", {"note": "n"}, "note", "n" * limits.NOTE, "n" * (limits.NOTE + 1)),
    ("report_progress", "heartbeat", {"note": "n"}, "status", "s" * limits.STATUS, "s" * (limits.STATUS + 1)),
    ("request_input", "ask", {}, "question", "q" * limits.QUESTION, "q" * (limits.QUESTION + 1)),
    (
        "request_input",
        "ask",
        {"question": "Which?"},
        "options",
        ["o"] * limits.OPTIONS,
        ["o"] * (limits.OPTIONS + 1),
    ),
    ("complete_task", "complete", {}, "outcome", "o" * limits.OUTCOME, "o" * (limits.OUTCOME + 1)),
    ("release_task", "release", {}, "reason", "r" * limits.REASON, "r" * (limits.REASON + 1)),
]


class Both:
    def __init__(self, mcp: MCP, rest: AsyncApi) -> None:
        self.mcp, self.rest = mcp, rest

    async def refused_alike(self, tool: str, args: dict[str, Any], method: str, path: str, body: Any) -> None:
        by_mcp = (await self.mcp.call(tool, args))["structuredContent"]
        answer = await self.rest.call(method, path, body)
        by_rest = answer.json()
        assert answer.status_code == 422, (tool, by_rest)
        assert by_mcp["error"]["code"] == by_rest["error"]["code"] == "invalid_argument", (
            tool,
            by_mcp,
            by_rest,
        )
        assert by_mcp["error"]["details"]["field"] == by_rest["error"]["details"]["field"], (
            tool,
            by_mcp,
            by_rest,
        )
        assert mcp_meaning(by_mcp["_next_action"]) == rest_meaning(by_rest["_next_action"]), (
            tool,
            by_mcp,
            by_rest,
        )

    async def claim(self) -> dict[str, Any]:
        task = (await self.rest.call("POST", "tasks", {"title": "Edge"})).json()["task"]["id"]
        return (await self.rest.call("POST", f"tasks/{task}/start")).json()


async def _edges(b: Both) -> None:
    for field, at, past in TASK_EDGES:
        taken = await b.rest.call("POST", "tasks", {"title": "Edge", field: at})
        assert taken.status_code == 201, (field, taken.json())
        await b.refused_alike(
            "create_task", {"title": "Edge", field: past}, "POST", "tasks", {"title": "Edge", field: past}
        )
    query = {"query": "q" * limits.SEARCH_QUERY, "limit": limits.SEARCH_LIMIT}
    assert (await b.rest.call("GET", "tasks/search", query)).status_code == 200
    for field, past in (("query", "q" * (limits.SEARCH_QUERY + 1)), ("limit", limits.SEARCH_LIMIT + 1)):
        await b.refused_alike("search", {**query, field: past}, "GET", "tasks/search", {**query, field: past})
    for tool, verb, base, field, at, past in LEASE_EDGES:
        for value, ok in ((past, False), (at, True)):
            claim = await b.claim()
            fixed = {
                "leaseToken": claim["leaseToken"],
                "outcome": "o",
                "reason": "r",
                "question": "q",
                **base,
            }
            body = {k: v for k, v in fixed.items() if k in _fields(tool)} | {field: value}
            if ok:
                taken = await b.rest.call("POST", f"runs/{claim['runId']}/{verb}", body)
                assert taken.status_code == 200, (tool, field, taken.json())
            else:
                args = {"runId": claim["runId"], **body}
                await b.refused_alike(tool, args, "POST", f"runs/{claim['runId']}/{verb}", body)


def _fields(tool: str) -> set[str]:
    return {
        "report_progress": {"leaseToken", "note"},
        "request_input": {"leaseToken", "question"},
        "complete_task": {"leaseToken", "outcome"},
        "release_task": {"leaseToken", "reason"},
    }[tool]


async def _refusals(b: Both) -> None:
    await b.refused_alike("create_task", {"title": "N\u0000UL"}, "POST", "tasks", {"title": "N\u0000UL"})
    nul = (await b.rest.call("POST", "tasks", {"title": "Nested", "description": "a\u0000b"})).json()
    assert nul["error"]["details"]["field"] == "description"
    assert nul["_next_action"] == 'Fix: POST /api/v1/tasks {"description": "ab", "title": "Nested"}'
    held = await b.claim()
    lease = {"leaseToken": held["leaseToken"]}
    cases: list[tuple[Callable[[], Awaitable[Any]], int, str]] = [
        (
            lambda: b.rest.client.post("/api/v1/tasks", content=b"x" * (5 * 1024 * 1024), headers=_auth(b)),
            413,
            "payload_too_large",
        ),
        (
            lambda: b.rest.client.post("/api/v1/tasks", content=b"{not json", headers=_auth(b)),
            422,
            "invalid_argument",
        ),
        (
            lambda: b.rest.client.post("/api/v1/tasks", content=b"[1, 2]", headers=_auth(b)),
            422,
            "invalid_argument",
        ),
        (
            lambda: b.rest.client.post(
                "/api/v1/tasks", data={"title": "form"}, headers={"authorization": _auth(b)["authorization"]}
            ),
            415,
            "unsupported_media_type",
        ),
        (
            # Half a surrogate pair, escaped: no character, PostgreSQL cannot store it (MCP's parser
            # refuses it as well). A report's evidence takes any JSON: before the parser refused
            # it, the completion answered internal_error.
            lambda: b.rest.client.post(
                f"/api/v1/runs/{held['runId']}/complete",
                content=json.dumps({**lease, "outcome": "o", "artifacts": ["half \ud800"]}).encode(),
                headers=_auth(b),
            ),
            422,
            "invalid_argument",
        ),
        (
            lambda: b.rest.client.post(
                "/api/v1/tasks", content=b"[" * 100_000 + b"]" * 100_000, headers=_auth(b)
            ),
            422,
            "invalid_argument",
        ),
        (lambda: b.rest.client.put("/api/v1/tasks", json={}, headers=_auth(b)), 405, "method_not_allowed"),
        (lambda: b.rest.call("GET", "tasks/search", {"query": "x\u0000"}), 422, "invalid_argument"),
        (lambda: b.rest.call("GET", "tasks/not-a-number"), 422, "invalid_argument"),
    ]
    paired = await b.rest.client.post(
        "/api/v1/tasks", content=rb'{"title": "whole \ud83d\ude00"}', headers=_auth(b)
    )
    assert (paired.status_code, paired.json()["task"]["title"]) == (201, "whole \U0001f600")
    for send, status, code in cases:
        answer = await send()
        body = answer.json()
        assert (answer.status_code, body["error"]["code"]) == (status, code), body
        assert body["_next_action"].startswith(("Fix: ", "Wait: ")), body


def _auth(b: Both) -> dict[str, str]:
    return {"authorization": f"Bearer {b.rest.token}", "content-type": "application/json"}


async def _session(token: str) -> None:
    async with in_process() as client:
        both = Both(MCP(client, token), AsyncApi(client, token))
        await _edges(both)
        await _refusals(both)


def test_limits_hold_at_their_edges_as_over_mcp(alice, ws_a):
    ws_a.plan = type(ws_a.plan).named("pro")
    ws_a.save(update_fields=["plan"])
    token, _ = agent_token(alice, ws_a)
    asyncio.run(_session(token))
