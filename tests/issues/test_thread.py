"""The thread: the reporter's messages (with or without a build), the maintainers' writes for the web
triage, and the news a reporting connection has not read yet."""

from __future__ import annotations

import pytest

from accounts.models import AgentConnection
from issues.models import IntakeSettings, IssueMessage, IssueStatus
from issues.selectors import issue_for_maintainer, news_for_connection
from issues.services import (
    issue_mark_duplicate,
    issue_message_add,
    issue_reply,
    issue_resolve,
    issue_set_status,
    issue_status_read,
)
from tests.issues.helpers import submit
from weft.errors import WeftError
from weft.models import Event

pytestmark = pytest.mark.django_db


def _types(issue_id: int) -> list[str]:
    return list(
        Event.objects.filter(entity_type="issue", entity_id=str(issue_id))
        .order_by("pk")
        .values_list("type", flat=True)
    )


def test_a_reporter_message_with_a_build_is_kept_without_a_warning(agent):
    issue = submit(agent).issue
    added = issue_message_add(
        connection=agent, issue_id=issue.pk, body="Also on 1.4.3", reporter_app_version="1.4.3"
    )
    assert not added.message.build_missing and added.payload()["warning"] is None
    assert added.message.side == IssueMessage.REPORTER and added.message.reporter_app_version == "1.4.3"
    assert _types(issue.pk) == ["issue.created", "issue.message_created"]


def test_a_reporter_message_without_a_build_is_kept_with_a_warning(agent):
    issue = submit(agent).issue
    added = issue_message_add(connection=agent, issue_id=issue.pk, body="Still broken")
    assert added.message.build_missing
    assert added.payload()["warning"].startswith("no build was named")
    assert "Warning: no build was named" in added.summary()


def test_a_reporter_message_without_a_build_takes_the_clients(agent):
    AgentConnection.objects.filter(pk=agent.pk).update(client_name="codex", client_version="0.9.1")
    agent.refresh_from_db()
    issue = submit(agent).issue
    added = issue_message_add(connection=agent, issue_id=issue.pk, body="Still broken")
    assert not added.message.build_missing and added.message.reporter_app_version == "codex/0.9.1"


def test_a_message_is_redacted(agent):
    issue = submit(agent).issue
    added = issue_message_add(
        connection=agent, issue_id=issue.pk, body="ask eve@example.com", reporter_git_sha="1a2b3c4"
    )
    assert "eve@example.com" not in added.message.body and added.message.redacted_kinds == ["EMAIL"]


def test_the_receiving_workspaces_agent_does_not_write_on_the_reporter_side(agent, agent_b, ws_b):
    IntakeSettings.objects.create(workspace=ws_b, open_intake=True)
    issue = submit(agent, workspace=ws_b.slug).issue
    with pytest.raises(WeftError) as refused:
        issue_message_add(connection=agent_b, issue_id=issue.pk, body="from the maintainers' agent")
    assert refused.value.code == "forbidden" and refused.value.fix.marker == "Wait"
    assert not IssueMessage.objects.exists()


def test_a_reply_answers_on_the_maintainer_side_and_is_news_until_read(agent, alice):
    issue = submit(agent).issue
    assert news_for_connection(connection=agent) == []
    reply = issue_reply(issue=issue, user=alice, body="Which board? mail me at alice@example.com")
    assert reply.message.side == IssueMessage.MAINTAINER and "alice@example.com" not in reply.message.body
    assert [i.pk for i in news_for_connection(connection=agent)] == [issue.pk]
    thread = issue_status_read(connection=agent, issue_id=issue.pk)
    assert [m.side for m in thread.messages] == ["maintainer"]
    assert news_for_connection(connection=agent) == []
    issue_reply(issue=issue, user=alice, body="Any news?")
    assert [i.pk for i in news_for_connection(connection=agent)] == [issue.pk]


def test_news_is_only_for_the_connection_that_filed(agent, agent2, alice):
    issue = submit(agent).issue
    issue_reply(issue=issue, user=alice, body="Looking")
    issue_status_read(connection=agent2, issue_id=issue.pk)  # another connection's read is not the reporter's
    assert news_for_connection(connection=agent2) == []
    assert [i.pk for i in news_for_connection(connection=agent)] == [issue.pk]


def test_a_reply_needs_a_seat_in_the_receiving_workspace(agent, carol):
    issue = submit(agent).issue
    with pytest.raises(WeftError) as refused:
        issue_reply(issue=issue, user=carol, body="not mine")
    assert refused.value.code == "not_found"


def test_set_status_moves_the_issue_and_a_reporter_answer_returns_it_to_triage(agent):
    issue = submit(agent).issue
    issue = issue_set_status(issue=issue, status=IssueStatus.WAITING_INPUT)
    assert issue.status == "waiting_input"
    assert "asked for detail" in issue_status_read(connection=agent, issue_id=issue.pk).hint.lines()[0]
    issue_message_add(connection=agent, issue_id=issue.pk, body="Board 3", reporter_app_version="1.4.2")
    issue.refresh_from_db()
    assert issue.status == "triaged"
    assert _types(issue.pk) == ["issue.created", "issue.updated", "issue.message_created", "issue.updated"]


def test_set_status_refuses_an_unknown_status_and_routes_resolved_to_resolve(agent):
    issue = submit(agent).issue
    with pytest.raises(WeftError) as refused:
        issue_set_status(issue=issue, status="wontfix")
    assert refused.value.code == "invalid_argument"
    resolved = issue_set_status(issue=issue, status=IssueStatus.RESOLVED, resolution="Fixed in 1.4.3")
    assert resolved.status == "resolved" and _types(issue.pk)[-1] == "issue.resolved"


def test_resolve_stores_the_redacted_resolution_and_the_reporter_reads_done(agent):
    issue = submit(agent).issue
    issue = issue_resolve(issue=issue, resolution="Fixed; thanks to frank@example.com")
    assert issue.status == "resolved" and "frank@example.com" not in issue.resolution
    thread = issue_status_read(connection=agent, issue_id=issue.pk)
    assert thread.hint.lines() == ["Done."] and thread.payload()["issue"]["resolution"] == issue.resolution
    assert [i.pk for i in news_for_connection(connection=agent)] == []


def test_mark_duplicate_links_to_the_original_and_refuses_cycles_and_foreign_issues(agent, agent_b):
    first, second = submit(agent).issue, submit(agent).issue
    marked = issue_mark_duplicate(issue=second, of=first)
    assert (marked.status, marked.duplicate_of_id) == ("duplicate", first.pk)
    with pytest.raises(WeftError) as cycle:
        issue_mark_duplicate(issue=first, of=second)
    assert cycle.value.code == "invalid_argument"
    with pytest.raises(WeftError):
        issue_mark_duplicate(issue=first, of=first)
    with pytest.raises(WeftError) as foreign:
        issue_mark_duplicate(issue=first, of=submit(agent_b).issue)
    assert foreign.value.code == "not_found"
    assert _types(second.pk) == ["issue.created", "issue.updated"]


def test_issue_for_maintainer_is_scoped_to_the_receiving_workspace(agent, ws_a, ws_b):
    issue = submit(agent).issue
    assert issue_for_maintainer(workspace=ws_a, issue_id=issue.pk).pk == issue.pk
    with pytest.raises(WeftError) as refused:
        issue_for_maintainer(workspace=ws_b, issue_id=issue.pk)
    assert refused.value.code == "not_found"


def test_an_upstream_link_is_an_http_url_the_reporter_reads(agent):
    from issues.services import issue_set_upstream

    issue = submit(agent).issue
    linked = issue_set_upstream(issue=issue, url="https://github.com/acme/weft/issues/12")
    thread = issue_status_read(connection=agent, issue_id=issue.pk)
    assert thread.payload()["issue"]["upstreamUrl"] == linked.upstream_url
    assert "Upstream: https://github.com/acme/weft/issues/12" in thread.summary()
    for bad in ["javascript:alert(1)", "https://", "ftp://example.com/x", "https://e.com/" + "a" * 2_000]:
        with pytest.raises(WeftError) as refused:
            issue_set_upstream(issue=issue, url=bad)
        assert refused.value.code == "invalid_argument"
    assert _types(issue.pk)[-1] == "issue.updated"


def test_revoking_an_issues_guest_tokens_ends_them(agent):
    from issues.models import GuestToken
    from issues.services import issue_guest_tokens_revoke

    submitted = submit(agent)
    assert issue_guest_tokens_revoke(issue=submitted.issue) == 1
    assert issue_guest_tokens_revoke(issue=submitted.issue) == 0
    with pytest.raises(WeftError) as refused:
        issue_status_read(connection=agent, issue_id=submitted.issue.pk, guest_token=submitted.guest_token)
    assert refused.value.code == "guest_token_invalid"
    assert GuestToken.objects.get().revoked_at is not None
