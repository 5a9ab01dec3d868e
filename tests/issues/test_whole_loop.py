"""The whole loop without a browser for the maintainers: a reporter in workspace B files into
workspace A; A's maintainer's agent follows A's issue events on the SSE stream (its bearer token,
`Last-Event-ID` from the last event it read), replies, asks for detail, reads the answer, makes a
task and does it, all over MCP; a person accepts the task in the Inbox (deciding is a person's
act); the reporter's get_issue_status shows the resolution.

Weft runs under uvicorn on a free port (tests/weft/test_stream.py's way); each read of the stream
takes a known number of events and closes, so a missing event fails by the deadline, never hangs.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import User, Workspace
from boards.models import InboxItem
from boards.services import board_default
from issues.models import IntakeSettings
from tests.issues.helpers import mcp_calls, ok
from tests.mcp.harness import agent_token
from tests.web.test_browser import LiveServer, file_database  # noqa: F401  (a fixture)
from tests.weft.test_stream import blocks
from weft import events
from weft.stream import STREAM_PATH

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

OUTCOME = "get_board_state reads one query per column now: 4 s became 90 ms."
DEADLINE_SECONDS = 20.0


@pytest.fixture(scope="module")
def live(request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    request.getfixturevalue("file_database")  # tests/web/test_browser.py's, on SQLite a file
    server = LiveServer()
    server.start()
    yield server
    server.stop()


class Follower:
    """The maintainer's agent on A's stream of issue events, resuming from the last id it read."""

    def __init__(self, server: LiveServer, token: str) -> None:
        self.url = f"{server.url}{STREAM_PATH}?entity_type=issue"
        self.token = token
        # The oldest cursor the log holds: every issue event of this (new) workspace comes after it.
        self.cursor = str(events.trimmed_through())

    def next(self, count: int) -> list[tuple[str, dict[str, Any]]]:
        """The next `count` issue events: read, then the connection closed."""
        headers = {"authorization": f"Bearer {self.token}", "last-event-id": self.cursor}
        got: list[tuple[str, dict[str, Any]]] = []
        deadline = time.monotonic() + DEADLINE_SECONDS
        with httpx.stream("GET", self.url, headers=headers, timeout=httpx.Timeout(10.0)) as response:
            assert response.status_code == 200, response.read()
            for block in blocks(response):
                assert time.monotonic() < deadline, f"only {got} of {count} events came"
                if block.event and block.data is not None:
                    assert block.event != "gap", block.data
                    got.append((block.event, block.data["data"]))
                    self.cursor = str(block.id)
                    if len(got) == count:
                        break
        return got


def _accept(person: User, ws: Workspace, item_id: int) -> None:
    """A person's act in the Inbox: accept the review."""
    client = Client()
    client.force_login(person)
    url = reverse("boards:inbox_decide", kwargs={"slug": ws.slug, "item_id": item_id})
    response = client.post(url, {"decision": "accept"})
    assert response.status_code in (200, 302), response.content[:400]


def _file(reporter: str, ws: Workspace) -> int:
    report = {"title": "Board is slow", "body": "get_board_state takes 4 s.", "kind": "bug"}
    [filed] = mcp_calls(
        reporter, ("submit_issue", {**report, "reporter_app_version": "1.4.2", "workspace": ws.slug})
    )
    return int(ok(filed)["issue"]["id"])


def _triage(maintainer: str, issue_id: int, **args: Any) -> dict[str, Any]:
    [answer] = mcp_calls(maintainer, ("triage_issue", {"id": issue_id, **args}))
    return ok(answer)


def _do_the_task(maintainer: str, next_action: str) -> int:
    """Run the hinted start_task, then complete the run; the task's id."""
    prefix = 'Next: start_task {"id": '
    assert next_action.startswith(prefix), next_action
    task_id = int(next_action.removeprefix(prefix).rstrip("}"))
    [started] = mcp_calls(maintainer, ("start_task", {"id": task_id}))
    run = ok(started)
    lease = {"runId": run["runId"], "leaseToken": run["leaseToken"]}
    [completed] = mcp_calls(maintainer, ("complete_task", {**lease, "outcome": OUTCOME}))
    ok(completed)
    return task_id


def test_the_whole_loop_reaches_the_reporter(live, alice, ws_a, carol, ws_b):
    IntakeSettings.objects.create(workspace=ws_a, open_intake=True)
    reporter, _ = agent_token(carol, ws_b, name="Reporter")
    maintainer, _ = agent_token(alice, ws_a, name="Maintainer's agent")
    follower = Follower(live, maintainer)

    issue_id = _file(reporter, ws_a)
    [created] = follower.next(1)
    assert created[0] == "issue.created" and created[1]["issueId"] == issue_id

    # The maintainer's agent replies, then asks for detail; the stream shows both, then the wait.
    _triage(maintainer, issue_id, action="reply", body="Thanks, looking.")
    asked = _triage(maintainer, issue_id, action="ask", body="How many tasks on that board?")
    assert asked["_next_action"].startswith(f"Wait: the reporter answers the question on issue {issue_id}")
    seen = follower.next(3)
    assert [t for t, _ in seen] == ["issue.message_created", "issue.message_created", "issue.updated"]
    assert seen[-1][1]["status"] == "waiting_input"

    # The reporter reads the question and answers it; the maintainer's agent sees it and reads it.
    [status, answer] = mcp_calls(
        reporter,
        ("get_issue_status", {"id": issue_id}),
        ("add_issue_message", {"id": issue_id, "body": "About 300 tasks.", "reporter_app_version": "1.4.2"}),
    )
    assert [m["body"] for m in ok(status)["messages"]] == [
        "Thanks, looking.",
        "How many tasks on that board?",
    ]
    assert ok(answer)["issue"]["status"] == "triaged"
    seen = follower.next(2)
    assert [(t, p.get("side") or p.get("status")) for t, p in seen] == [
        ("issue.message_created", "reporter"),
        ("issue.updated", "triaged"),
    ]
    [thread] = mcp_calls(maintainer, ("get_issue_status", {"id": issue_id}))
    assert ok(thread)["messages"][-1]["body"] == "About 300 tasks."

    # The maintainer's agent makes a task on a board, and does the task its answer names.
    board = board_default(workspace=ws_a)
    made = _triage(maintainer, issue_id, action="make_task", boardId=board.pk)
    [moved] = follower.next(1)
    assert moved[0] == "issue.updated" and moved[1]["status"] == "in_progress"
    assert moved[1]["taskId"] == made["taskId"]
    task_id = _do_the_task(maintainer, made["_next_action"])

    # A person accepts the review in the Inbox; the relay resolves the issue. The next issue
    # event after the task was made is the resolution: doing the task moved nothing of the issue.
    _accept(alice, ws_a, InboxItem.objects.get(task_id=task_id).pk)
    [resolved] = follower.next(1)
    assert resolved[0] == "issue.resolved"

    # The reporter's next read shows the resolution.
    [final] = mcp_calls(reporter, ("get_issue_status", {"id": issue_id}))
    issue = ok(final)["issue"]
    assert issue["status"] == "resolved"
    assert issue["resolution"] == f"Task #{task_id} was accepted. {OUTCOME}"
