"""submit_issue through MCP: the build is required (or filled from the client), links in the same
transaction, the id and a guest token returned, redaction before storing."""

from __future__ import annotations

from typing import Any

import pytest

from accounts.models import AgentConnection
from boards.services import board_default, task_create
from issues.models import GuestToken, Issue, IssueLink
from tests.issues.helpers import mcp_calls, ok, refused
from tests.mcp.harness import agent_token, text_of
from weft.models import Event

pytestmark = pytest.mark.django_db(transaction=True)

BASE: dict[str, Any] = {"title": "Board is slow", "body": "get_board_state takes 4 s.", "kind": "bug"}


def test_it_refuses_a_submission_without_a_build_with_the_exact_envelope(alice, ws_a):
    token, _ = agent_token(alice, ws_a)
    [result] = mcp_calls(token, ("submit_issue", BASE))
    data = refused(result, "ERR_REPORTER_ENVIRONMENT_REQUIRED")
    assert data["error"]["details"] == {
        "acceptable_field_groups": [["reporter_git_sha"], ["reporter_app_version"]]
    }
    assert data["error"]["message"] == (
        "submit_issue needs the build this was seen on: send reporter_git_sha (the output of"
        " `git rev-parse HEAD` in the checkout) or reporter_app_version (e.g. 1.4.2);"
        " 'unknown' files it as a build nobody can name"
    )
    fix_line = (
        'Fix: submit_issue {"body": "get_board_state takes 4 s.", "kind": "bug",'
        ' "reporter_git_sha": "unknown", "title": "Board is slow"}'
    )
    assert data["_next_action"] == fix_line
    assert text_of(result).splitlines()[-1] == fix_line
    assert text_of(result).splitlines()[-2].startswith("Error: ERR_REPORTER_ENVIRONMENT_REQUIRED — ")
    assert not Issue.objects.exists() and not Event.objects.filter(entity_type="issue").exists()


def test_the_fix_line_files_the_issue_as_written(alice, ws_a):
    token, _ = agent_token(alice, ws_a)
    [first] = mcp_calls(token, ("submit_issue", BASE))
    fixed = dict(BASE, reporter_git_sha="unknown")
    assert first["structuredContent"]["_next_action"].endswith(
        '"reporter_git_sha": "unknown", "title": "Board is slow"}'
    )
    [second] = mcp_calls(token, ("submit_issue", fixed))
    issue = Issue.objects.get(pk=ok(second)["issue"]["id"])
    assert issue.environment_class == "unknown" and issue.reporter_git_sha == "unknown"


def test_the_server_fills_the_version_from_the_clients_initialize(alice, ws_a):
    token, connection = agent_token(alice, ws_a)
    init = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "claude-code", "version": "2.0.14"},
    }
    [result] = mcp_calls(token, ("submit_issue", BASE), initialize=init)
    data = ok(result)
    connection.refresh_from_db()
    assert (connection.client_name, connection.client_version) == ("claude-code", "2.0.14")
    issue = Issue.objects.get(pk=data["issue"]["id"])
    assert issue.reporter_app_version == "claude-code/2.0.14"
    assert issue.app_version_from_client and issue.reporter_git_sha == ""
    assert issue.environment_class == "public_release"
    assert data["issue"]["reporterAppVersion"] == "claude-code/2.0.14"


def test_a_version_the_agent_names_wins_over_the_client(alice, ws_a):
    token, connection = agent_token(alice, ws_a)
    AgentConnection.objects.filter(pk=connection.pk).update(client_name="cursor", client_version="1.7")
    [result] = mcp_calls(token, ("submit_issue", dict(BASE, reporter_git_sha="1a2b3c4@fix-login")))
    issue = Issue.objects.get(pk=ok(result)["issue"]["id"])
    assert (issue.reporter_git_sha, issue.reporter_app_version) == ("1a2b3c4@fix-login", "")
    assert not issue.app_version_from_client and issue.environment_class == "local_branch"


def test_it_returns_the_id_and_a_guest_token_hashed_at_rest(alice, ws_a):
    token, _ = agent_token(alice, ws_a)
    [result] = mcp_calls(token, ("submit_issue", dict(BASE, reporter_app_version="1.4.2")))
    data = ok(result)
    guest = data["guestToken"]
    assert isinstance(data["issue"]["id"], int) and guest.startswith("wgt_")
    assert data["guestTokenExpiresAt"] and guest in text_of(result)
    row = GuestToken.objects.get()
    stored = [
        str(v) for v in GuestToken.objects.values_list(*[f.attname for f in GuestToken._meta.fields]).get()
    ]
    assert all(guest not in value and guest.removeprefix("wgt_") not in value for value in stored)
    assert len(row.token_hash) == 64 and row.issue_id == data["issue"]["id"]
    issue_id = data["issue"]["id"]
    assert data["_next_action"] == (
        f"Wait: the maintainers of the receiving workspace triage issue {issue_id}, within a day;"
        f' check again with get_issue_status {{"id": {issue_id}}}'
    )
    assert [e.type for e in Event.objects.filter(entity_type="issue")] == ["issue.created"]


def test_it_redacts_before_storing(alice, ws_a):
    token, _ = agent_token(alice, ws_a)
    args = dict(BASE, title="Mail to bob@example.com fails", body="bob@example.com got nothing")
    [result] = mcp_calls(token, ("submit_issue", dict(args, reporter_app_version="1.4.2")))
    issue = Issue.objects.get(pk=ok(result)["issue"]["id"])
    assert "bob@example.com" not in issue.title + issue.body
    placeholder = issue.title.split()[2]
    assert placeholder.startswith("<EMAIL:") and placeholder in issue.body  # one salt per submission
    assert issue.redacted_kinds == ["EMAIL"]
    event = Event.objects.get(type="issue.created")
    assert "bob@example.com" not in str(event.payload)


def test_links_are_made_in_the_same_transaction(alice, ws_a):
    token, _ = agent_token(alice, ws_a)
    board = board_default(workspace=ws_a)
    task = task_create(workspace=ws_a, title="Speed up the board", by_user=alice).task
    links = [f"task:{task.pk}", f"board:{board.pk}"]
    [result] = mcp_calls(
        token, ("submit_issue", dict(BASE, reporter_app_version="1.4.2", entity_ids_to_link=links))
    )
    data = ok(result)
    rows = IssueLink.objects.filter(issue_id=data["issue"]["id"]).order_by("pk")
    assert [(r.target_type, r.task_id, r.board_id) for r in rows] == [
        ("task", task.pk, None),
        ("board", None, board.pk),
    ]
    assert data["links"] == links


def test_a_malformed_link_is_refused_with_the_call_without_it(alice, ws_a):
    token, _ = agent_token(alice, ws_a)
    args = dict(BASE, reporter_app_version="1.4.2", entity_ids_to_link=["ticket:9"])
    [result] = mcp_calls(token, ("submit_issue", args))
    data = refused(result, "invalid_argument")
    assert data["error"]["details"]["field"] == "entity_ids_to_link[0]"
    assert data["_next_action"] == (
        'Fix: submit_issue {"body": "get_board_state takes 4 s.", "kind": "bug",'
        ' "reporter_app_version": "1.4.2", "title": "Board is slow"}'
    )
    assert not Issue.objects.exists()
