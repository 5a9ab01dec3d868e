"""triage_issue and list_issues: a maintainer's agent (an owner's or admin's connection of the
receiving workspace) replies, asks, resolves, closes, marks a duplicate, makes a task and lists;
a member's agent and a foreign issue are refused."""

from __future__ import annotations

import pytest

from accounts.models import AgentConnection
from boards.models import Task
from boards.services import board_default
from issues.models import Issue, IssueLink, IssueMessage, IssueStatus
from tests.issues.helpers import mcp_calls, ok, refused, submit
from tests.mcp.harness import agent_token, text_of
from weft.models import Event

pytestmark = pytest.mark.django_db(transaction=True)

MISSING = 987654321


@pytest.fixture
def maintainer(alice, ws_a) -> str:
    return agent_token(alice, ws_a, name="Maintainer's agent")[0]


@pytest.fixture
def issue(agent) -> Issue:
    return submit(agent).issue


def _types(issue_id: int) -> list[str]:
    rows = Event.objects.filter(entity_type="issue", entity_id=str(issue_id)).order_by("pk")
    return list(rows.values_list("type", flat=True))


def test_it_replies_and_asks_as_the_connections_user(maintainer, issue, alice):
    replied, asked = mcp_calls(
        maintainer,
        ("triage_issue", {"id": issue.pk, "action": "reply", "body": "Thanks, looking."}),
        ("triage_issue", {"id": issue.pk, "action": "ask", "body": "Which board?"}),
    )
    assert ok(replied)["issue"]["status"] == "open"
    assert ok(replied)["_next_action"].startswith(
        f"Wait: the reporter or a maintainer writes on issue {issue.pk}"
    )
    assert ok(asked)["issue"]["status"] == "waiting_input"
    assert "get_issue_status" in ok(asked)["_next_action"]
    messages = IssueMessage.objects.filter(issue=issue).order_by("pk")
    assert [(m.side, m.body, m.author_user_id) for m in messages] == [
        (IssueMessage.MAINTAINER, "Thanks, looking.", alice.pk),
        (IssueMessage.MAINTAINER, "Which board?", alice.pk),
    ]
    assert _types(issue.pk)[1:] == ["issue.message_created", "issue.message_created", "issue.updated"]


def test_it_resolves_closes_and_sets_a_status(maintainer, agent):
    one, two, three = (submit(agent).issue for _ in range(3))
    resolved, closed, triaged = mcp_calls(
        maintainer,
        ("triage_issue", {"id": one.pk, "action": "resolve", "body": "Fixed in 1.4.3."}),
        ("triage_issue", {"id": two.pk, "action": "close"}),
        ("triage_issue", {"id": three.pk, "action": "status", "status": "triaged"}),
    )
    assert (
        ok(resolved)["issue"]["resolution"] == "Fixed in 1.4.3." and ok(resolved)["_next_action"] == "Done."
    )
    assert ok(closed)["issue"]["status"] == "closed" and ok(closed)["_next_action"] == "Done."
    assert ok(triaged)["issue"]["status"] == "triaged"
    assert "issue.resolved" in _types(one.pk)


def test_it_marks_a_duplicate(maintainer, agent):
    original, copy = submit(agent).issue, submit(agent).issue
    [marked] = mcp_calls(
        maintainer, ("triage_issue", {"id": copy.pk, "action": "duplicate", "duplicateOf": original.pk})
    )
    assert ok(marked)["issue"]["duplicateOf"] == original.pk
    copy.refresh_from_db()
    assert copy.status == IssueStatus.DUPLICATE


def test_it_makes_a_task_on_the_named_or_default_board(maintainer, agent, ws_a):
    board = board_default(workspace=ws_a)
    first, second = submit(agent).issue, submit(agent).issue
    named, default = mcp_calls(
        maintainer,
        ("triage_issue", {"id": first.pk, "action": "make_task", "boardId": board.pk, "body": "Speed it up"}),
        ("triage_issue", {"id": second.pk, "action": "make_task"}),
    )
    task = Task.objects.get(pk=ok(named)["taskId"])
    assert (task.board_id, task.title, task.review_required) == (board.pk, "Speed it up", True)
    assert ok(named)["_next_action"] == f'Next: start_task {{"id": {task.pk}}}'
    assert ok(named)["issue"]["status"] == "in_progress"
    assert Task.objects.get(pk=ok(default)["taskId"]).board_id == board.pk
    assert IssueLink.objects.filter(issue=first, task=task).exists()


def test_it_lists_the_received_issues_newest_first(maintainer, agent):
    older, newer = submit(agent).issue, submit(agent, kind="enhancement").issue
    listed, bugs, none = mcp_calls(
        maintainer,
        ("list_issues", {}),
        ("list_issues", {"kind": "bug"}),
        ("list_issues", {"status": "resolved"}),
    )
    assert [i["id"] for i in ok(listed)["issues"]] == [newer.pk, older.pk]
    assert ok(listed)["_next_action"] == f'Next: get_issue_status {{"id": {newer.pk}}}'
    assert [i["id"] for i in ok(bugs)["issues"]] == [older.pk]
    assert ok(none)["issues"] == [] and ok(none)["_next_action"] == "Done."


def test_it_refuses_a_missing_argument_with_a_read(maintainer, issue):
    body, of, status = mcp_calls(
        maintainer,
        ("triage_issue", {"id": issue.pk, "action": "reply"}),
        ("triage_issue", {"id": issue.pk, "action": "duplicate"}),
        ("triage_issue", {"id": issue.pk, "action": "status"}),
    )
    assert refused(body, "invalid_argument")["_next_action"] == f'Fix: get_issue_status {{"id": {issue.pk}}}'
    assert refused(of, "invalid_argument")["_next_action"] == "Fix: list_issues {}"
    refused(status, "invalid_argument")
    assert IssueMessage.objects.filter(issue=issue).count() == 0


def test_a_members_agent_is_refused_and_changes_nothing(bob, ws_a, issue):
    token, _ = agent_token(bob, ws_a, name="Bob's agent")
    reply, listing, missing = mcp_calls(
        token,
        ("triage_issue", {"id": issue.pk, "action": "reply", "body": "Me too."}),
        ("list_issues", {}),
        ("triage_issue", {"id": MISSING, "action": "close"}),
    )
    body = refused(reply, "forbidden")
    assert body["_next_action"].startswith("Wait: an owner or admin of workspace")
    assert body["_next_action"].endswith(f'get_issue_status {{"id": {issue.pk}}}'), text_of(reply)
    refused(listing, "forbidden")
    refused(missing, "forbidden")
    issue.refresh_from_db()
    assert issue.status == IssueStatus.OPEN and not IssueMessage.objects.filter(issue=issue).exists()


def test_the_reporters_side_cannot_triage_an_issue_it_filed_elsewhere(carol, ws_b, ws_a, alice):
    """An agent of the filing workspace reads its issue but triages only what its workspace received."""
    from issues.models import IntakeSettings

    IntakeSettings.objects.create(workspace=ws_a, open_intake=True)
    reporter = AgentConnection.objects.create(workspace=ws_b, user=carol, name="Reporter")
    filed = submit(reporter, workspace=ws_a.slug).issue
    token, _ = agent_token(carol, ws_b, name="Carol's agent")
    foreign, missing = mcp_calls(
        token,
        ("triage_issue", {"id": filed.pk, "action": "close"}),
        ("triage_issue", {"id": MISSING, "action": "close"}),
    )
    f, m = refused(foreign, "not_found"), refused(missing, "not_found")
    assert f["_next_action"] == m["_next_action"]
    assert f["error"]["message"].replace(str(filed.pk), "X") == m["error"]["message"].replace(
        str(MISSING), "X"
    )
    filed.refresh_from_db()
    assert filed.status == IssueStatus.OPEN


def test_a_task_title_past_the_boards_limit_is_refused_not_cut(maintainer, issue):
    from boards import limits as board_limits

    at_edge, past = "a" * board_limits.TITLE, "a" * (board_limits.TITLE + 1)
    refused_call, made = mcp_calls(
        maintainer,
        ("triage_issue", {"id": issue.pk, "action": "make_task", "body": past}),
        ("triage_issue", {"id": issue.pk, "action": "make_task", "body": at_edge}),
    )
    assert refused(refused_call, "invalid_argument")["error"]["details"]["limit"] == board_limits.TITLE
    assert Task.objects.get(pk=ok(made)["taskId"]).title == at_edge


def test_the_lists_next_step_is_the_newest_issue_still_open_or_done(maintainer, agent):
    open_one, closed = submit(agent).issue, submit(agent).issue
    first, listed, _, only_closed = mcp_calls(
        maintainer,
        ("triage_issue", {"id": closed.pk, "action": "close"}),
        ("list_issues", {}),
        ("triage_issue", {"id": open_one.pk, "action": "resolve", "body": "Fixed."}),
        ("list_issues", {}),
    )
    assert [i["id"] for i in ok(listed)["issues"]] == [closed.pk, open_one.pk]
    assert ok(listed)["_next_action"] == f'Next: get_issue_status {{"id": {open_one.pk}}}'
    assert ok(only_closed)["_next_action"] == "Done."
    ok(first)
