"""The loop keeps its word through MCP: one token per run, reports never lost, review only by
people, limits at their edge, and `Fix:` lines that fix (run as written, they are accepted)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from accounts.models import Plan, User, Workspace
from boards import limits
from boards.models import Column, InboxItem, Report, Task
from boards.services import task_move, task_update
from tests.mcp.harness import MCP, agent_token, in_process, text_of
from weft.hints import problems

pytestmark = pytest.mark.django_db(transaction=True)

READS = {"get_my_work", "get_board_state", "get_task"}


def _session(user: User, workspace: Workspace, body: Callable[[MCP], Awaitable[None]]) -> None:
    # Pro: these sessions make more calls than the free plan's monthly 200.
    workspace.plan = Plan.named(Plan.PRO)
    workspace.save(update_fields=["plan"])
    token, _ = agent_token(user, workspace)

    async def run() -> None:
        async with in_process() as client:
            await body(MCP(client, token))

    asyncio.run(run())


def ok(result: dict[str, Any]) -> dict[str, Any]:
    assert not result.get("isError"), text_of(result)
    assert not problems(text_of(result), result["structuredContent"]), text_of(result)
    return result["structuredContent"]


def refused(result: dict[str, Any], code: str) -> dict[str, Any]:
    assert result.get("isError"), text_of(result)
    data = result["structuredContent"]
    assert data["error"]["code"] == code, text_of(result)
    assert not problems(text_of(result), data), text_of(result)
    return data


def call_of(line: str) -> tuple[str, dict[str, Any]]:
    """`Fix: tool {json}` (or Next:) → (tool, arguments)."""
    body = line.split(": ", 1)[1]
    tool, _, args = body.partition(" ")
    return tool, json.loads(args)


async def _task(mcp: MCP, **fields: Any) -> dict[str, Any]:
    created = ok(await mcp.call("create_task", {"title": "Ship the importer", **fields}))
    return created["task"]


async def _claim(mcp: MCP, task_id: int) -> dict[str, str]:
    started = ok(await mcp.call("start_task", {"id": task_id}))
    return {"runId": started["runId"], "leaseToken": started["leaseToken"]}


def test_it_hands_the_holder_one_token_for_the_whole_run(alice, ws_a):
    async def body(mcp: MCP) -> None:
        task = await _task(mcp)
        first = await _claim(mcp, task["id"])
        again = await _claim(mcp, task["id"])
        assert again == first
        ok(await mcp.call("report_progress", {**first, "note": "halfway"}))
        held = ok(await mcp.call("get_my_work"))["held"]
        assert [(h["runId"], h["leaseToken"]) for h in held] == [(first["runId"], first["leaseToken"])]
        third = await _claim(mcp, task["id"])
        assert third == first
        ok(await mcp.call("complete_task", {**third, "outcome": "Imported."}))

    _session(alice, ws_a, body)


def test_it_keeps_a_report_with_unusable_evidence_and_sends_it_to_a_person(alice, ws_a):
    async def body(mcp: MCP) -> None:
        task = await _task(mcp)
        lease = await _claim(mcp, task["id"])
        artifacts = [
            {"kind": "url", "uri": "https://example.com/pr/7", "httpStatus": 200},
            {"kind": "screenshot", "uri": "s3://bucket/a.png"},
            {"kind": "url", "uri": "not a url"},
            "a loose string",
        ]
        done = ok(
            await mcp.call(
                "complete_task",
                {**lease, "outcome": "Imported.", "artifacts": artifacts, "claims": ["tests pass", {"n": 1}]},
            )
        )
        fields = [n["field"] for n in done["notAccepted"]]
        assert fields == ["artifacts[1]", "artifacts[2]", "artifacts[3]", "claims[1]"]
        assert done["review"] is True and done["_next_action"].startswith("Wait:")

    _session(alice, ws_a, body)
    report = Report.objects.get()
    assert report.outcome == "Imported."
    assert report.artifacts[0] == {"kind": "url", "uri": "https://example.com/pr/7", "httpStatus": 200}
    assert report.artifacts[2] == {
        "given": {"kind": "url", "uri": "not a url"},
        "unverifiable": report.artifacts[2]["unverifiable"],
    }
    assert "http(s)" in report.artifacts[2]["unverifiable"]
    assert InboxItem.objects.get().report_id == report.pk


def test_it_refuses_a_report_only_without_an_outcome_or_a_lease(alice, ws_a):
    async def body(mcp: MCP) -> None:
        task = await _task(mcp)
        lease = await _claim(mcp, task["id"])
        refused(await mcp.call("complete_task", {**lease}), "invalid_argument")
        refused(await mcp.call("complete_task", {**lease, "outcome": "   "}), "invalid_argument")
        wrong = {**lease, "leaseToken": "0" * 64}
        refused(await mcp.call("complete_task", {**wrong, "outcome": "Imported."}), "lease_lost")
        ok(await mcp.call("complete_task", {**lease, "outcome": "Imported.", "artifacts": [42]}))

    _session(alice, ws_a, body)


def test_it_refuses_an_agent_every_way_around_a_persons_review(alice, ws_a):
    state: dict[str, Any] = {}

    async def body(mcp: MCP) -> None:
        task = await _task(mcp, reviewRequired=True, estimatedReviewMinutes=30)
        state["id"] = task["id"]
        lease = await _claim(mcp, task["id"])
        refused(await mcp.call("update_task", {"id": task["id"], "reviewRequired": False}), "forbidden")
        refused(await mcp.call("update_task", {"id": task["id"], "estimatedReviewMinutes": 1}), "forbidden")
        refused(await mcp.call("update_task", {"id": task["id"], "column": "todo"}), "forbidden")
        ok(await mcp.call("complete_task", {**lease, "outcome": "Imported."}))
        # The review waits on a person: nothing of the task is the agent's to change.
        for change in (
            {"column": "done"},
            {"column": "dropped"},
            {"column": "todo"},
            {"reviewRequired": False},
            {"title": "Renamed"},
        ):
            data = refused(await mcp.call("update_task", {"id": task["id"], **change}), "forbidden")
            assert data["_next_action"].startswith("Wait:"), data

    _session(alice, ws_a, body)
    task = Task.objects.get(pk=state["id"])
    assert task.column == Column.DOING and task.review_required and task.title == "Ship the importer"
    assert InboxItem.objects.get(task=task).state == "open"
    # A person keeps every power the web app gives them.
    task_update(task=task, by_user=alice, review_required=False, estimated_review_minutes=1)
    task_move(task=task, column=Column.DONE, by_user=alice)
    task.refresh_from_db()
    assert task.column == Column.DONE and not task.review_required
    assert InboxItem.objects.get(task=task).state == "decided"


def test_it_lets_an_agent_move_between_backlog_and_todo_and_switch_review_on(alice, ws_a):
    async def body(mcp: MCP) -> None:
        task = await _task(mcp, column="backlog")
        moved = ok(await mcp.call("update_task", {"id": task["id"], "column": "todo"}))
        assert moved["task"]["column"] == "todo"
        back = ok(await mcp.call("update_task", {"id": task["id"], "column": "backlog"}))
        assert back["task"]["column"] == "backlog"
        on = ok(await mcp.call("update_task", {"id": task["id"], "reviewRequired": True}))
        assert on["task"]["reviewRequired"] is True
        for column in ("done", "dropped"):
            refused(await mcp.call("update_task", {"id": task["id"], "column": column}), "forbidden")
        # A refused move in the same call leaves its other changes undone.
        both = {"id": task["id"], "title": "Renamed", "column": "done"}
        refused(await mcp.call("update_task", both), "forbidden")
        after = ok(await mcp.call("get_task", {"id": task["id"]}))
        assert after["task"]["title"] == "Ship the importer", after
        refused(
            await mcp.call("create_task", {"title": "Done already", "column": "done"}), "invalid_argument"
        )

    _session(alice, ws_a, body)


@pytest.mark.parametrize(
    ("tool", "field", "limit"),
    [
        ("create_task", "title", limits.TITLE),
        ("create_task", "description", limits.DESCRIPTION),
        ("search", "query", limits.SEARCH_QUERY),
        ("report_progress", "note", limits.NOTE),
        ("report_progress", "status", limits.STATUS),
        ("request_input", "question", limits.QUESTION),
        ("complete_task", "outcome", limits.OUTCOME),
        ("complete_task", "nextStep", limits.NEXT_STEP),
        ("release_task", "reason", limits.REASON),
    ],
)
def test_it_holds_each_text_limit_at_its_edge(alice, ws_a, tool, field, limit):
    async def body(mcp: MCP) -> None:
        base: dict[str, Any] = {
            "create_task": {"title": "t"},
            "search": {"query": "t"},
            "report_progress": {"note": "n"},
            "request_input": {"question": "q"},
            "complete_task": {"outcome": "o"},
            "release_task": {"reason": "r"},
        }[tool]
        if tool in {"report_progress", "request_input", "complete_task", "release_task"}:
            task = await _task(mcp)
            base = {**base, **(await _claim(mcp, task["id"]))}
        over = refused(await mcp.call(tool, {**base, field: "x" * (limit + 1)}), "invalid_argument")
        fix_tool, fix_args = call_of(over["_next_action"])
        assert (fix_tool, len(fix_args[field])) == (tool, limit)
        # The Fix: line, run as written, is accepted: it is the call at the edge.
        ok(await mcp.call(fix_tool, fix_args))

    _session(alice, ws_a, body)


def test_it_holds_the_list_limits_at_their_edge(alice, ws_a):
    async def body(mcp: MCP) -> None:
        task = await _task(mcp)
        lease = await _claim(mcp, task["id"])
        too_many = [f"option {i}" for i in range(limits.OPTIONS + 1)]
        data = refused(
            await mcp.call("request_input", {**lease, "question": "Which?", "options": too_many}),
            "invalid_argument",
        )
        fix_tool, fix_args = call_of(data["_next_action"])
        assert fix_tool == "request_input" and fix_args["options"] == too_many[: limits.OPTIONS]
        long_option = {**lease, "question": "Which?", "options": ["a" * (limits.OPTION + 1)]}
        refused(await mcp.call("request_input", long_option), "invalid_argument")
        ok(await mcp.call(fix_tool, fix_args))
        claims = ["c" * limits.EVIDENCE_ITEM, "d" * (limits.EVIDENCE_ITEM + 1)]
        data = refused(
            await mcp.call("complete_task", {**lease, "outcome": "o", "claims": claims}), "invalid_argument"
        )
        assert data["error"]["details"]["field"] == "claims[1]"
        fix_tool, fix_args = call_of(data["_next_action"])
        assert fix_args["claims"] == [claims[0], claims[1][: limits.EVIDENCE_ITEM]]
        ok(await mcp.call(fix_tool, fix_args))

    _session(alice, ws_a, body)


@pytest.mark.parametrize(
    "due",
    [
        "9999-12-31T23:59:59-12:00",
        "0001-01-01T00:00:00+14:00",
        "3000-01-01T00:00:00Z",
        "1969-12-31T23:59:59Z",
        "275760-09-13T00:00:00Z",
        "not a date",
    ],
)
def test_it_refuses_due_dates_no_reader_could_show_and_the_board_still_answers(alice, ws_a, due):
    async def body(mcp: MCP) -> None:
        data = refused(await mcp.call("create_task", {"title": "Due", "dueAt": due}), "invalid_argument")
        fix_tool, fix_args = call_of(data["_next_action"])
        assert fix_tool == "create_task" and "dueAt" not in fix_args
        task = await _task(mcp)
        refused(await mcp.call("update_task", {"id": task["id"], "dueAt": due}), "invalid_argument")
        ok(await mcp.call("get_board_state"))
        ok(await mcp.call("get_my_work"))

    _session(alice, ws_a, body)
    assert not Task.objects.exclude(due_at=None).exists()


def test_it_keeps_due_dates_at_the_edges_readable(alice, ws_a, client):
    async def body(mcp: MCP) -> None:
        first = await _task(mcp, dueAt="1970-01-01T00:00:00Z")
        last = await _task(mcp, dueAt="2999-12-31T23:59:59+00:00")
        naive = await _task(mcp, dueAt="2027-03-01T09:30:00")
        assert naive["dueAt"] == "2027-03-01T09:30:00+00:00"
        assert first["dueAt"].startswith("1970-01-01") and last["dueAt"].startswith("2999-12-31")
        ok(await mcp.call("get_board_state"))
        ok(await mcp.call("get_my_work"))

    _session(alice, ws_a, body)
    client.force_login(alice)
    assert client.get(f"/w/{ws_a.slug}/").status_code == 200


@pytest.mark.parametrize(
    ("tool", "args", "expect"),
    [
        ("search", {"query": "x", "limit": 0}, {"query": "x", "limit": 1}),
        ("search", {"query": "x", "limit": 1000}, {"query": "x", "limit": limits.SEARCH_LIMIT}),
        ("create_task", {"title": "t", "priority": 9}, {"title": "t", "priority": 3}),
        (
            "create_task",
            {"title": "t", "estimatedReviewMinutes": 0},
            {"title": "t", "estimatedReviewMinutes": 1},
        ),
        ("create_task", {"title": "t", "column": "doing"}, {"title": "t"}),
        ("create_task", {"title": "t\x00"}, {"title": "t"}),
        ("get_board_state", {"boardId": -4}, {}),
        ("get_task", {"id": 2**64}, None),
        ("get_task", {"id": "abc"}, None),
        ("create_task", {"title": ""}, None),
    ],
)
def test_it_answers_a_bad_argument_with_a_fix_that_works(alice, ws_a, tool, args, expect):
    async def body(mcp: MCP) -> None:
        data = refused(await mcp.call(tool, args), "invalid_argument")
        fix_tool, fix_args = call_of(data["_next_action"])
        if expect is None:
            assert fix_tool in READS, data["_next_action"]
        else:
            assert (fix_tool, fix_args) == (tool, expect)
        answer = await mcp.call(fix_tool, fix_args)
        if answer.get("isError"):
            # A corrected id may still name nothing; the argument itself is valid now.
            assert answer["structuredContent"]["error"]["code"] == "not_found", text_of(answer)
        else:
            ok(answer)

    _session(alice, ws_a, body)


def test_it_refuses_nul_in_any_text_argument_and_stores_nothing(alice, ws_a):
    async def body(mcp: MCP) -> None:
        task = await _task(mcp)
        lease = await _claim(mcp, task["id"])
        for tool, args in [
            ("create_task", {"title": "a\x00b"}),
            ("update_task", {"id": task["id"], "description": "\x00"}),
            ("report_progress", {**lease, "note": "n\x00"}),
            ("request_input", {**lease, "question": "q", "options": ["\x00yes"]}),
            ("complete_task", {**lease, "outcome": "o", "artifacts": [{"kind": "file", "uri": "a\x00"}]}),
            ("search", {"query": "\x00"}),
        ]:
            data = refused(await mcp.call(tool, args), "invalid_argument")
            assert "\x00" not in data["_next_action"]
        ok(await mcp.call("get_board_state"))

    _session(alice, ws_a, body)
    assert Task.objects.count() == 1 and not Report.objects.exists()
