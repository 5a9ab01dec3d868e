"""Every issue text at its exact limit is accepted and round-trips; one past it, or with NUL, is
refused with invalid_argument and stores nothing (issues/limits.py, docs/limits.md "Issues")."""

from __future__ import annotations

import pytest

from issues import limits
from issues.models import Issue, IssueMessage
from issues.services import issue_message_add, issue_resolve
from tests.issues.helpers import mcp_calls, ok, refused, submit
from tests.mcp.harness import agent_token
from weft.errors import WeftError

pytestmark = pytest.mark.django_db


def test_the_limits_are_the_documented_numbers():
    """Pinned as literals: a changed limit must change docs/limits.md and this line together."""
    documented = (200, 20_000, 10_000, 10_000, 100, 200, 20, 100, 100)
    assert documented == (
        limits.TITLE,
        limits.BODY,
        limits.MESSAGE,
        limits.RESOLUTION,
        limits.GIT_SHA,
        limits.APP_VERSION,
        limits.LINKS,
        limits.LINK_ID,
        limits.GUEST_TOKEN,
    )


@pytest.mark.parametrize(
    ("field", "limit"),
    [("title", 200), ("body", 20_000), ("reporter_git_sha", 100), ("reporter_app_version", 200)],
)
def test_a_submission_field_at_its_limit_round_trips_and_one_past_is_refused(agent, field, limit):
    at_edge = "a" * limit
    issue = submit(agent, **{field: at_edge}).issue
    issue.refresh_from_db()
    assert getattr(issue, field) == at_edge
    with pytest.raises(WeftError) as past:
        submit(agent, **{field: at_edge + "a"})
    assert past.value.code == "invalid_argument"
    assert past.value.details == {
        "field": field,
        "reason": f"at most {limit} characters (got {limit + 1})",
        "problem": "too_long",
        "limit": limit,
    }
    assert Issue.objects.count() == 1


def test_links_at_their_limit_and_one_past(agent, ws_a):
    from boards.services import board_default

    board = board_default(workspace=ws_a)
    assert len(submit(agent, entity_ids_to_link=[f"board:{board.pk}"] * limits.LINKS).links) == limits.LINKS
    with pytest.raises(WeftError) as past:
        submit(agent, entity_ids_to_link=[f"board:{board.pk}"] * (limits.LINKS + 1))
    assert past.value.code == "invalid_argument" and past.value.details["field"] == "entity_ids_to_link"


def test_a_message_and_a_resolution_at_their_limit_and_one_past(agent):
    issue = submit(agent).issue
    added = issue_message_add(connection=agent, issue_id=issue.pk, body="m" * 10_000)
    assert IssueMessage.objects.get(pk=added.message.pk).body == "m" * 10_000
    with pytest.raises(WeftError):
        issue_message_add(connection=agent, issue_id=issue.pk, body="m" * 10_001)
    assert issue_resolve(issue=issue, resolution="r" * 10_000).resolution == "r" * 10_000
    with pytest.raises(WeftError):
        issue_resolve(issue=issue, resolution="r" * 10_001)


@pytest.mark.parametrize("field", ["title", "body"])
def test_a_blank_title_or_body_is_refused(agent, field):
    with pytest.raises(WeftError) as blank:
        submit(agent, **{field: "   "})
    assert blank.value.details["problem"] == "empty"


@pytest.mark.parametrize("field", ["title", "body", "reporter_git_sha"])
def test_nul_is_refused_by_the_service(agent, field):
    with pytest.raises(WeftError) as nul:
        submit(agent, **{field: "a\x00b"})
    assert nul.value.details["problem"] == "nul"
    assert not Issue.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_the_tools_refuse_past_the_limit_and_nul_with_the_call_corrected(alice, ws_a):
    token, _ = agent_token(alice, ws_a)
    base = {"body": "b", "kind": "bug", "reporter_app_version": "1.4.2"}
    at, past, nul, message = mcp_calls(
        token,
        ("submit_issue", dict(base, title="t" * 200)),
        ("submit_issue", dict(base, title="t" * 201)),
        ("submit_issue", dict(base, title="a\x00b")),
        ("add_issue_message", {"id": 1, "body": "m" * 10_001}),
    )
    assert ok(at)["issue"]["title"] == "t" * 200
    data = refused(past, "invalid_argument")
    assert data["_next_action"] == (
        'Fix: submit_issue {"body": "b", "kind": "bug", "reporter_app_version": "1.4.2", "title": "'
        + "t" * 200
        + '"}'
    )
    assert refused(nul, "invalid_argument")["_next_action"].endswith('"title": "ab"}')
    refused(message, "invalid_argument")
    assert Issue.objects.count() == 1
