"""The whole loop over MCP, with two connections: a reporter in workspace B files into workspace A,
whose maintainer's agent follows A's event log (issue.* events). The people of A triage on the web
pages: reply, ask for detail, make a task; the maintainer's agent does the task over MCP; a person
accepts it in the Inbox; the reporter's get_issue_status shows the resolution."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import Workspace
from boards.models import InboxItem
from boards.services import board_default
from issues.models import IntakeSettings
from tests.issues.helpers import mcp_calls, ok
from tests.mcp.harness import agent_token
from weft import events

pytestmark = pytest.mark.django_db(transaction=True)

ISSUE_TYPES = ["issue.created", "issue.updated", "issue.message_created", "issue.resolved"]
OUTCOME = "get_board_state reads one query per column now: 4 s became 90 ms."


class Follower:
    """The maintainer's agent reading its workspace's log from a cursor, issue events only."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self.cursor = 0

    def new(self) -> list[tuple[str, dict[str, Any]]]:
        got = events.read(workspace_id=self.workspace.pk, after=self.cursor, limit=100, types=ISSUE_TYPES)
        if got:
            self.cursor = got[-1].position or self.cursor
        return [(e.type, e.payload) for e in got]


def _web(person, ws: Workspace, name: str, data: dict[str, Any], **kwargs: Any) -> None:
    client = Client()
    client.force_login(person)
    prefix = "boards" if name.startswith("inbox") else "issues"
    response = client.post(reverse(f"{prefix}:{name}", kwargs={"slug": ws.slug, **kwargs}), data)
    assert response.status_code in (200, 302), response.content[:400]


def test_the_whole_loop_reaches_the_reporter(alice, ws_a, carol, ws_b):
    IntakeSettings.objects.create(workspace=ws_a, open_intake=True)
    reporter, _ = agent_token(carol, ws_b, name="Reporter")
    maintainer, _ = agent_token(alice, ws_a, name="Maintainer's agent")
    follower = Follower(ws_a)

    # The reporter files into workspace A.
    [filed] = mcp_calls(
        reporter,
        (
            "submit_issue",
            {
                "title": "Board is slow",
                "body": "get_board_state takes 4 s.",
                "kind": "bug",
                "reporter_app_version": "1.4.2",
                "workspace": ws_a.slug,
            },
        ),
    )
    issue_id = ok(filed)["issue"]["id"]
    [created] = follower.new()
    assert created[0] == "issue.created" and created[1]["issueId"] == issue_id

    # A person replies, then asks for detail; the maintainer's agent sees both.
    _web(alice, ws_a, "reply", {"body": "Thanks, looking."}, issue_id=issue_id)
    _web(alice, ws_a, "reply", {"body": "How many tasks on that board?", "ask": "on"}, issue_id=issue_id)
    seen = follower.new()
    assert [t for t, _ in seen] == ["issue.message_created", "issue.message_created", "issue.updated"]
    assert seen[-1][1]["status"] == "waiting_input"

    # The reporter reads the question and answers it.
    [status, answer] = mcp_calls(
        reporter,
        ("get_issue_status", {"id": issue_id}),
        ("add_issue_message", {"id": issue_id, "body": "About 300 tasks.", "reporter_app_version": "1.4.2"}),
    )
    thread = ok(status)
    assert thread["issue"]["status"] == "waiting_input"
    assert [m["body"] for m in thread["messages"]] == ["Thanks, looking.", "How many tasks on that board?"]
    assert ok(answer)["issue"]["status"] == "triaged"
    seen = follower.new()
    assert [(t, p.get("side") or p.get("status")) for t, p in seen] == [
        ("issue.message_created", "reporter"),
        ("issue.updated", "triaged"),
    ]

    # A person makes a task on a board; the maintainer's agent sees which task and does it.
    board = board_default(workspace=ws_a)
    _web(alice, ws_a, "task", {"board": board.pk}, issue_id=issue_id)
    [made] = follower.new()
    assert made[0] == "issue.updated" and made[1]["status"] == "in_progress"
    task_id = made[1]["taskId"]
    [started] = mcp_calls(maintainer, ("start_task", {"id": task_id}))
    run = ok(started)
    [completed] = mcp_calls(
        maintainer,
        ("complete_task", {"runId": run["runId"], "leaseToken": run["leaseToken"], "outcome": OUTCOME}),
    )
    ok(completed)
    assert follower.new() == []

    # A person accepts the review in the Inbox; the relay resolves the issue.
    item = InboxItem.objects.get(task_id=task_id)
    _web(alice, ws_a, "inbox_decide", {"decision": "accept"}, item_id=item.pk)
    [resolved] = follower.new()
    assert resolved[0] == "issue.resolved"

    # The reporter's next read shows the resolution.
    [final] = mcp_calls(reporter, ("get_issue_status", {"id": issue_id}))
    issue = ok(final)["issue"]
    assert issue["status"] == "resolved"
    assert issue["resolution"] == f"Task #{task_id} was accepted. {OUTCOME}"
