"""Tenant isolation of every issue tool: a foreign issue, workspace or link target answers exactly
like a missing one, and a refused submission stores nothing (rows counted before and after)."""

from __future__ import annotations

from typing import Any

import pytest

from boards.models import Run, Task
from boards.services import board_default, task_claim, task_create
from issues.models import GuestToken, Issue, IssueLink, IssueMessage
from tests.issues.helpers import mcp_calls, ok, refused, submit
from tests.mcp.harness import agent_token
from weft.models import Event

pytestmark = pytest.mark.django_db(transaction=True)

MISSING = 987654321
REPORT = {
    "title": "Slow search",
    "body": "search takes 3 s.",
    "kind": "performance",
    "reporter_app_version": "1.0.0",
}


def _rows() -> dict[str, int]:
    return {
        "issues": Issue.objects.count(),
        "links": IssueLink.objects.count(),
        "tokens": GuestToken.objects.count(),
        "messages": IssueMessage.objects.count(),
        "events": Event.objects.filter(entity_type="issue").count(),
    }


def _same(
    foreign: dict[str, Any], missing: dict[str, Any], code: str, foreign_id: str, missing_id: str
) -> None:
    f, m = refused(foreign, code), refused(missing, code)
    assert f["_next_action"] == m["_next_action"]
    assert set(f["error"]["details"]) == set(m["error"]["details"])
    assert f["error"]["message"].replace(foreign_id, "X") == m["error"]["message"].replace(missing_id, "X")


@pytest.fixture
def a_objects(alice, ws_a, agent) -> dict[str, Any]:
    """Workspace A's task, board, run and issue, which workspace B's agent must not reach."""
    board = board_default(workspace=ws_a)
    task = task_create(workspace=ws_a, title="acme task", board=board, by_user=alice).task
    claim = task_claim(task_id=task.pk, connection=agent)
    issue = submit(agent).issue
    return {"task": task.pk, "board": board.pk, "run": str(claim.run.run_id), "issue": issue.pk}


@pytest.mark.parametrize(
    ("kind", "missing"),
    [
        ("task", str(MISSING)),
        ("board", str(MISSING)),
        ("run", "00000000-0000-4000-8000-000000000000"),
        ("issue", str(MISSING)),
    ],
)
def test_a_link_to_a_foreign_object_refuses_the_whole_submission(a_objects, carol, ws_b, kind, missing):
    token, _ = agent_token(carol, ws_b)
    own = task_create(workspace=ws_b, title="beta task", by_user=carol).task
    foreign_link = f"{kind}:{a_objects[kind]}"
    before = _rows()
    foreign, absent = mcp_calls(
        token,
        ("submit_issue", dict(REPORT, entity_ids_to_link=[f"task:{own.pk}", foreign_link])),
        ("submit_issue", dict(REPORT, entity_ids_to_link=[f"task:{own.pk}", f"{kind}:{missing}"])),
    )
    assert _rows() == before
    data = refused(foreign, "not_found")
    assert data["error"]["details"] == {
        "field": "entity_ids_to_link[1]",
        "kind": kind,
        "id": str(a_objects[kind]),
    }
    assert f"{kind} {a_objects[kind]} does not exist" in data["error"]["message"]
    assert "nothing was filed" in data["error"]["message"]
    _same(foreign, absent, "not_found", f"{kind} {a_objects[kind]}", f"{kind} {missing}")
    assert data["_next_action"].startswith("Fix: submit_issue ")
    assert f'"entity_ids_to_link": ["task:{own.pk}"]' in data["_next_action"]


def test_a_foreign_issue_id_answers_like_a_missing_one_on_every_issue_tool(a_objects, carol, ws_b):
    token, _ = agent_token(carol, ws_b)
    foreign = a_objects["issue"]
    before = _rows()
    results = mcp_calls(
        token,
        ("get_issue_status", {"id": foreign}),
        ("get_issue_status", {"id": MISSING}),
        ("add_issue_message", {"id": foreign, "body": "from B", "reporter_app_version": "1.0.0"}),
        ("add_issue_message", {"id": MISSING, "body": "from B", "reporter_app_version": "1.0.0"}),
        ("triage_issue", {"id": foreign, "action": "reply", "body": "from B"}),
        ("triage_issue", {"id": MISSING, "action": "reply", "body": "from B"}),
    )
    assert _rows() == before
    _same(results[0], results[1], "not_found", str(foreign), str(MISSING))
    _same(results[2], results[3], "not_found", str(foreign), str(MISSING))
    _same(results[4], results[5], "not_found", str(foreign), str(MISSING))


@pytest.mark.parametrize("argument", ["boardId", "duplicateOf"])
def test_a_foreign_board_or_original_in_a_triage_answers_like_a_missing_one(a_objects, carol, ws_b, argument):
    """B's maintainer triages B's own issue naming A's board (make_task) or A's issue (duplicate)."""
    token, connection = agent_token(carol, ws_b)
    own = submit(connection).issue
    action = "make_task" if argument == "boardId" else "duplicate"
    foreign = a_objects["board" if argument == "boardId" else "issue"]
    before, tasks = _rows(), Task.objects.count()
    results = mcp_calls(
        token,
        ("triage_issue", {"id": own.pk, "action": action, argument: foreign}),
        ("triage_issue", {"id": own.pk, "action": action, argument: MISSING}),
    )
    assert _rows() == before and Task.objects.count() == tasks
    _same(results[0], results[1], "not_found", str(foreign), str(MISSING))
    own.refresh_from_db()
    assert own.status == "open"


def test_list_issues_shows_nothing_of_another_workspace(a_objects, carol, ws_b):
    token, connection = agent_token(carol, ws_b)
    own = submit(connection).issue
    [listed] = mcp_calls(token, ("list_issues", {"limit": 200}))
    assert [i["id"] for i in ok(listed)["issues"]] == [own.pk]


def test_my_own_connection_with_another_workspaces_issue_id_is_not_found(alice, ws_a, agent, carol, ws_b):
    """B's own issue is readable by B; A's issue id from B's connection is not, by any tool."""
    token_b, connection_b = agent_token(carol, ws_b)
    own = submit(connection_b).issue
    a_issue = submit(agent).issue
    mine, theirs = mcp_calls(
        token_b, ("get_issue_status", {"id": own.pk}), ("get_issue_status", {"id": a_issue.pk})
    )
    assert ok(mine)["issue"]["id"] == own.pk
    refused(theirs, "not_found")


def test_submitting_into_a_closed_workspace_answers_like_one_that_does_not_exist(alice, ws_a, carol, ws_b):
    token, _ = agent_token(carol, ws_b)
    before = _rows()
    closed, absent = mcp_calls(
        token,
        ("submit_issue", dict(REPORT, workspace=ws_a.slug)),
        ("submit_issue", dict(REPORT, workspace="no-such-workspace")),
    )
    assert _rows() == before
    _same(closed, absent, "not_found", ws_a.slug, "no-such-workspace")
    assert refused(closed, "not_found")["_next_action"].startswith("Fix: submit_issue ")
    assert '"workspace"' not in closed["structuredContent"]["_next_action"]
    assert not Run.objects.filter(workspace=ws_a).exists()
