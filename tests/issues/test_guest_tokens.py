"""Guest read tokens: one issue, any workspace's holder, refused cleanly when expired or revoked."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.models import User
from accounts.services import workspace_create
from issues.models import GuestToken, IntakeSettings, Issue
from tests.issues.helpers import mcp_calls, ok, refused
from tests.mcp.harness import agent_token, text_of

pytestmark = pytest.mark.django_db(transaction=True)

REPORT = {
    "title": "Export breaks",
    "body": "CSV export drops rows.",
    "kind": "bug",
    "reporter_app_version": "2.1.0",
}


@pytest.fixture
def dan_token(db) -> str:
    """A connection of a third workspace: neither the reporter's nor the receiving one."""
    dan = User.objects.create_user(email="dan@example.com", password="x")
    token, _ = agent_token(dan, workspace_create(owner=dan, name="Delta"))
    return token


def _filed(alice, ws_a) -> tuple[str, int, str]:
    token, _ = agent_token(alice, ws_a)
    [result] = mcp_calls(token, ("submit_issue", REPORT))
    data = ok(result)
    return token, data["issue"]["id"], data["guestToken"]


def test_a_guest_token_alone_lets_another_workspace_read_the_thread(alice, ws_a, dan_token):
    _, issue_id, guest = _filed(alice, ws_a)
    without, with_token = mcp_calls(
        dan_token,
        ("get_issue_status", {"id": issue_id}),
        ("get_issue_status", {"id": issue_id, "guest_token": guest}),
    )
    refused(without, "not_found")
    data = ok(with_token)
    assert data["issue"]["id"] == issue_id and data["issue"]["status"] == "open"
    assert data["_next_action"].endswith(f'get_issue_status {{"guest_token": "{guest}", "id": {issue_id}}}')


def test_the_reporters_workspace_reads_an_issue_it_filed_elsewhere_with_its_token(alice, carol, ws_a, ws_b):
    IntakeSettings.objects.create(workspace=ws_a, open_intake=True)
    token_b, _ = agent_token(carol, ws_b)
    [filed] = mcp_calls(token_b, ("submit_issue", dict(REPORT, workspace=ws_a.slug)))
    data = ok(filed)
    assert Issue.objects.get(pk=data["issue"]["id"]).workspace_id == ws_a.pk
    [read] = mcp_calls(
        token_b, ("get_issue_status", {"id": data["issue"]["id"], "guest_token": data["guestToken"]})
    )
    assert ok(read)["issue"]["title"] == REPORT["title"]


def test_a_valid_token_with_another_issues_id_is_not_found(alice, ws_a, dan_token):
    _, _issue_id, guest = _filed(alice, ws_a)
    _, other_id, _ = _filed(alice, ws_a)
    [result] = mcp_calls(dan_token, ("get_issue_status", {"id": other_id, "guest_token": guest}))
    data = refused(result, "not_found")
    assert data["error"]["message"] == f"issue {other_id} does not exist in this workspace"


def test_an_expired_token_is_refused_401_with_a_hint(alice, ws_a, dan_token):
    _, issue_id, guest = _filed(alice, ws_a)
    GuestToken.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    [result] = mcp_calls(dan_token, ("get_issue_status", {"id": issue_id, "guest_token": guest}))
    data = refused(result, "guest_token_expired")
    assert data["error"]["message"].startswith("this guest token expired at ")
    assert data["_next_action"].startswith("Wait: the reporter of issue")
    assert "guest_token_expired" in text_of(result)
    from weft.errors import HTTP_STATUS

    assert HTTP_STATUS["guest_token_expired"] == 401 == HTTP_STATUS["guest_token_invalid"]


def test_a_revoked_token_is_refused_401(alice, ws_a, dan_token):
    _, issue_id, guest = _filed(alice, ws_a)
    GuestToken.objects.update(revoked_at=timezone.now())
    [result] = mcp_calls(dan_token, ("get_issue_status", {"id": issue_id, "guest_token": guest}))
    assert refused(result, "guest_token_invalid")["error"]["message"] == "this guest token was revoked"


def test_an_unknown_token_is_refused_and_the_reporter_is_pointed_to_the_plain_read(alice, ws_a):
    token, issue_id, _ = _filed(alice, ws_a)
    [result] = mcp_calls(token, ("get_issue_status", {"id": issue_id, "guest_token": "wgt_nothing"}))
    data = refused(result, "guest_token_invalid")
    assert data["_next_action"] == f'Fix: get_issue_status {{"id": {issue_id}}}'


def test_a_token_is_stored_only_as_its_sha256(alice, ws_a):
    import hashlib

    _, _issue_id, guest = _filed(alice, ws_a)
    row = GuestToken.objects.values().get()
    assert row["token_hash"] == hashlib.sha256(guest.encode()).hexdigest()
    assert guest not in str(row) and guest.removeprefix("wgt_") not in str(row)
