"""The web triage: the filtered list, bulk close, replies the reporter reads next, duplicates,
"make a task" and its accept resolving the issue, and who may reach the pages."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from boards.models import Task
from boards.services import board_default, inbox_decide, task_claim
from issues.models import IntakeSettings, Issue, IssueLink, IssueStatus
from issues.selectors import news_for_connection
from issues.services import issue_status_read
from tests.boards.helpers import complete
from tests.issues.helpers import submit
from weft.events import relay
from weft.models import Event

pytestmark = pytest.mark.django_db


def _url(name: str, issue: Issue | None = None, **kwargs: Any) -> str:
    if issue is not None:
        kwargs.setdefault("slug", issue.workspace.slug)
        kwargs["issue_id"] = issue.pk
    return reverse(f"issues:{name}", kwargs=kwargs)


@pytest.fixture
def signed_in(client: Client, alice) -> Client:
    client.force_login(alice)
    return client


def _listed(client: Client, slug: str, **query: str) -> set[int]:
    response = client.get(_url("list", slug=slug), query)
    assert response.status_code == 200
    return {issue.pk for issue in response.context["issues"]}


def test_it_lists_by_kind_status_environment_and_build(signed_in, agent, ws_a):
    bug = submit(agent, kind="bug", reporter_app_version="1.4.2").issue
    slow = submit(agent, kind="performance", reporter_git_sha="1a2b3c4d5e6f").issue
    unknown = submit(agent, kind="enhancement", reporter_app_version=None, reporter_git_sha="unknown").issue
    Issue.objects.filter(pk=slow.pk).update(status=IssueStatus.TRIAGED)
    assert _listed(signed_in, ws_a.slug) == {bug.pk, slow.pk, unknown.pk}
    assert _listed(signed_in, ws_a.slug, kind="performance") == {slow.pk}
    assert _listed(signed_in, ws_a.slug, status="triaged") == {slow.pk}
    assert _listed(signed_in, ws_a.slug, environment=bug.environment_class) >= {bug.pk}
    assert _listed(signed_in, ws_a.slug, environment="unknown") == {unknown.pk}
    assert _listed(signed_in, ws_a.slug, has_build="yes") == {bug.pk, slow.pk}
    assert _listed(signed_in, ws_a.slug, has_build="no") == {unknown.pk}


def test_the_list_shows_only_the_workspaces_issues(signed_in, agent, agent_b, ws_a, ws_b):
    IntakeSettings.objects.create(workspace=ws_b, open_intake=True)
    mine = submit(agent).issue
    theirs = submit(agent, workspace=ws_b.slug).issue
    assert theirs.workspace_id == ws_b.pk
    assert _listed(signed_in, ws_a.slug) == {mine.pk}


def test_bulk_close_closes_the_chosen_and_keeps_a_resolved_outcome(signed_in, agent, ws_a):
    one, two, left = (submit(agent).issue for _ in range(3))
    Issue.objects.filter(pk=two.pk).update(status=IssueStatus.RESOLVED, resolution="Fixed in 1.4.3")
    response = signed_in.post(_url("close", slug=ws_a.slug), {"issue": [one.pk, two.pk]})
    assert response.status_code == 302
    statuses = dict(Issue.objects.values_list("pk", "status"))
    assert statuses == {one.pk: "closed", two.pk: "resolved", left.pk: "open"}
    assert Issue.objects.get(pk=two.pk).resolution == "Fixed in 1.4.3"


def test_bulk_close_with_a_foreign_id_closes_nothing(signed_in, agent, ws_a, ws_b):
    IntakeSettings.objects.create(workspace=ws_b, open_intake=True)
    mine, foreign = submit(agent).issue, submit(agent, workspace=ws_b.slug).issue
    response = signed_in.post(_url("close", slug=ws_a.slug), {"issue": [mine.pk, foreign.pk]})
    assert response.status_code == 404
    assert set(Issue.objects.values_list("status", flat=True)) == {"open"}


def test_a_reply_reaches_the_reporters_next_read(signed_in, agent):
    issue = submit(agent).issue
    response = signed_in.post(_url("reply", issue), {"body": "Which board is slow?"})
    assert response.status_code == 302
    assert [i.pk for i in news_for_connection(connection=agent)] == [issue.pk]
    thread = issue_status_read(connection=agent, issue_id=issue.pk)
    assert [(m.side, m.body) for m in thread.messages] == [("maintainer", "Which board is slow?")]
    assert news_for_connection(connection=agent) == []
    page = signed_in.get(_url("issue", issue))
    assert b"Which board is slow?" in page.content and b'data-side="maintainer"' in page.content


def test_asking_for_detail_waits_for_the_reporter(signed_in, agent):
    issue = submit(agent).issue
    signed_in.post(_url("reply", issue), {"body": "Which version?", "ask": "on"})
    assert Issue.objects.get(pk=issue.pk).status == IssueStatus.WAITING_INPUT


def test_a_status_change_and_the_upstream_link_reach_the_reporter(signed_in, agent):
    issue = submit(agent).issue
    signed_in.post(_url("status", issue), {"status": "triaged"})
    signed_in.post(_url("upstream", issue), {"url": "https://github.com/acme/weft/issues/9"})
    thread = issue_status_read(connection=agent, issue_id=issue.pk)
    assert (thread.issue.status, thread.issue.upstream_url) == (
        "triaged",
        "https://github.com/acme/weft/issues/9",
    )


def test_a_refused_write_comes_back_as_a_message(signed_in, agent):
    issue = submit(agent).issue
    response = signed_in.post(_url("upstream", issue), {"url": "ftp://example.com/x"}, follow=True)
    assert b"http(s) URL" in response.content
    assert Issue.objects.get(pk=issue.pk).upstream_url == ""


def test_mark_duplicate_of_an_issue_of_the_workspace(signed_in, agent):
    original, copy = submit(agent).issue, submit(agent).issue
    signed_in.post(_url("duplicate", copy), {"of": original.pk})
    copy.refresh_from_db()
    assert (copy.status, copy.duplicate_of_id) == ("duplicate", original.pk)


def test_a_foreign_duplicate_target_answers_like_a_missing_one(signed_in, agent, ws_b):
    IntakeSettings.objects.create(workspace=ws_b, open_intake=True)
    mine, foreign = submit(agent).issue, submit(agent, workspace=ws_b.slug).issue
    got = signed_in.post(_url("duplicate", mine), {"of": foreign.pk})
    missing = signed_in.post(_url("duplicate", mine), {"of": 987654321})
    assert got.status_code == missing.status_code == 404
    assert Issue.objects.get(pk=mine.pk).status == "open"


def _accept(task: Task, agent, alice, outcome: str) -> None:
    claim = task_claim(task_id=task.pk, connection=agent)
    done = complete(claim, outcome=outcome)
    inbox_decide(item=done.inbox_item, user=alice, decision="accept")


def test_make_a_task_links_it_and_its_accept_resolves_the_issue(signed_in, agent, alice, ws_a):
    issue = submit(agent).issue
    board = board_default(workspace=ws_a)
    response = signed_in.post(_url("task", issue), {"board": board.pk, "title": ""})
    assert response.status_code == 302
    link = IssueLink.objects.get(issue=issue, target_type="task")
    task = link.task
    assert task is not None
    assert (task.board_id, task.title, task.review_required) == (board.pk, issue.title, True)
    assert Issue.objects.get(pk=issue.pk).status == IssueStatus.IN_PROGRESS
    assert Event.objects.filter(type="issue.updated", payload__taskId=task.pk).count() == 1
    _accept(task, agent, alice, "The board query no longer loads every run.")
    relay()  # the relay that runs when the accept commits (tests hold one transaction)
    thread = issue_status_read(connection=agent, issue_id=issue.pk)
    assert thread.issue.status == IssueStatus.RESOLVED
    assert (
        thread.issue.resolution == f"Task #{task.pk} was accepted. The board query no longer loads every run."
    )
    assert Event.objects.filter(type="issue.resolved", entity_id=str(issue.pk)).count() == 1


def test_a_rework_does_not_resolve_the_issue(signed_in, agent, alice, ws_a):
    issue = submit(agent).issue
    signed_in.post(_url("task", issue), {"board": board_default(workspace=ws_a).pk})
    task = IssueLink.objects.get(issue=issue).task
    assert task is not None
    done = complete(task_claim(task_id=task.pk, connection=agent))
    inbox_decide(item=done.inbox_item, user=alice, decision="rework", note="again")
    relay()
    assert Issue.objects.get(pk=issue.pk).status == IssueStatus.IN_PROGRESS


def test_an_accepted_task_the_reporter_linked_does_not_resolve_an_untouched_issue(agent, alice, ws_a):
    task = Task.objects.create(
        workspace=ws_a, board=board_default(workspace=ws_a), title="t", review_required=True
    )
    issue = submit(agent, entity_ids_to_link=[f"task:{task.pk}"]).issue
    _accept(task, agent, alice, "done")
    relay()
    assert Issue.objects.get(pk=issue.pk).status == IssueStatus.OPEN


def test_a_foreign_board_for_a_task_answers_like_a_missing_one(signed_in, agent, ws_b):
    issue = submit(agent).issue
    foreign = board_default(workspace=ws_b)
    got = signed_in.post(_url("task", issue), {"board": foreign.pk})
    missing = signed_in.post(_url("task", issue), {"board": 987654321})
    assert (got.status_code, got.content) == (missing.status_code, missing.content)
    assert got.status_code == 404
    assert not Task.objects.exists() and Issue.objects.get(pk=issue.pk).status == "open"


def test_a_link_into_the_reporters_workspace_is_a_reference_only(signed_in, agent, ws_a, ws_b, carol):
    IntakeSettings.objects.create(workspace=ws_b, open_intake=True)
    task = Task.objects.create(workspace=ws_a, board=board_default(workspace=ws_a), title="Secret plan")
    issue = submit(agent, workspace=ws_b.slug, entity_ids_to_link=[f"task:{task.pk}"]).issue
    carols = Client()
    carols.force_login(carol)
    page = carols.get(_url("issue", issue))
    assert page.status_code == 200
    assert f'data-link="task:{task.pk}"'.encode() in page.content
    assert b"Secret plan" not in page.content and b"in another workspace" in page.content


def test_members_get_the_missing_workspaces_404(client, bob, agent, ws_a):
    issue = submit(agent).issue
    client.force_login(bob)
    assert client.get(_url("list", slug=ws_a.slug)).status_code == 404
    assert client.get(_url("issue", issue)).status_code == 404
    assert client.post(_url("close", slug=ws_a.slug), {"issue": [issue.pk]}).status_code == 404
    assert client.post(_url("reply", issue), {"body": "hi"}).status_code == 404
    assert Issue.objects.get(pk=issue.pk).status == "open" and not issue.messages.exists()


def test_every_page_sends_the_csp_and_every_form_needs_csrf(alice, agent):
    issue = submit(agent).issue
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    for url in (_url("list", slug=issue.workspace.slug), _url("issue", issue)):
        response = client.get(url)
        assert "Content-Security-Policy" in response.headers, url
        assert response.content.count(b"csrfmiddlewaretoken") >= 1, url
    assert client.post(_url("reply", issue), {"body": "no token"}).status_code == 403
    assert not issue.messages.exists()


def _made_task(client: Client, issue: Issue, ws) -> Task:
    client.post(_url("task", issue), {"board": board_default(workspace=ws).pk})
    task = IssueLink.objects.get(issue=issue, target_type="task").task
    assert task is not None
    return task


def test_a_workspace_that_takes_no_personal_data_resolves_without_quoting_the_outcome(
    signed_in, agent, alice, ws_a
):
    issue = submit(agent).issue
    task = _made_task(signed_in, issue, ws_a)
    IntakeSettings.objects.create(workspace=ws_a, redaction_mode="reject")
    _accept(task, agent, alice, "Mailed eve@example.com the fix.")
    relay()
    issue.refresh_from_db()
    assert (issue.status, issue.resolution) == ("resolved", f"Task #{task.pk} was accepted.")


def test_a_failing_resolution_never_holds_the_relay(signed_in, agent, alice, ws_a, monkeypatch):
    from issues.services import tasks

    issue = submit(agent).issue
    task = _made_task(signed_in, issue, ws_a)

    def broken(**kwargs: Any) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(tasks, "issues_resolve_for_accept", broken)
    _accept(task, agent, alice, "done")
    relay()
    assert not Event.objects.filter(position__isnull=True).exists()
    assert Issue.objects.get(pk=issue.pk).status == IssueStatus.IN_PROGRESS


def test_the_dashboard_links_the_triage_for_owners_and_admins_only(client, alice, bob, ws_a):
    triage = _url("list", slug=ws_a.slug).encode()
    dashboard = reverse("workspace_dashboard", kwargs={"slug": ws_a.slug})
    client.force_login(alice)
    assert triage in client.get(dashboard).content
    client.force_login(bob)
    assert triage not in client.get(dashboard).content


def test_the_issue_page_warns_when_no_build_is_named(signed_in, agent):
    from issues.services import issue_message_add

    named = submit(agent).issue
    unnamed = submit(agent, reporter_app_version=None, reporter_git_sha="unknown").issue
    issue_message_add(connection=agent, issue_id=named.pk, body="Still slow")
    assert b"The report names no build" in signed_in.get(_url("issue", unnamed)).content
    page = signed_in.get(_url("issue", named)).content
    assert b"The report names no build" not in page and b"This message names no build." in page
