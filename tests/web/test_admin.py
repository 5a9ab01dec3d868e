"""The operators' admin of boards, tasks, runs, Inbox items, issues and plan changes: operators
find rows by title, id and workspace; people without staff are refused; nothing an edit would
forge (a lease, an epoch, an event) can be changed; a changelist costs the same few queries
however many rows it shows."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.models import AgentConnection, PlanChange, Seat, User, Workspace
from accounts.payments import RecordedPayments
from accounts.services import plan_change_begin, workspace_create
from boards.models import Board, Run, RunState, Task
from issues.models import Issue, IssueKind
from tests.web.factories import make_review
from weft.events import emit

pytestmark = pytest.mark.django_db

CHANGELISTS = [
    "/admin/boards/board/",
    "/admin/boards/task/",
    "/admin/boards/run/",
    "/admin/boards/inboxitem/",
    "/admin/issues/issue/",
    "/admin/accounts/planchange/",
    "/admin/weft/event/",
]


@dataclass
class World:
    """One workspace's rows of every kind the admin lists, each with its own related rows."""

    workspace: Workspace
    task: Task
    run: Run
    issue: Issue


def _world(n: int) -> World:
    """Tenant A, B, …: letters, so that a search for an id matches no name or title."""
    letter = chr(ord("A") + n)
    owner = User.objects.create_user(email=f"owner{n}@example.com", password="x", name=f"Owner {letter}")
    workspace = workspace_create(owner=owner, name=f"Tenant {letter}")
    agent = AgentConnection.objects.create(workspace=workspace, user=owner, name=f"Agent {letter}")
    Board.objects.create(workspace=workspace, name=f"Board {letter}")
    item = make_review(workspace, agent, title=f"Ship the release notes of tenant {letter}")
    Task.objects.filter(pk=item.task_id).update(assignee_connection=agent)
    Run.objects.filter(pk=item.run_id).update(user=owner)
    issue = Issue.objects.create(workspace=workspace, kind=IssueKind.BUG, title=f"Crash {letter}", body="b")
    PlanChange.objects.create(
        workspace=workspace,
        by_user=owner,
        from_plan="free",
        from_period="monthly",
        to_plan="pro",
        to_period="monthly",
        seats=1,
        provider="recorded",
        state=PlanChange.RECORDED,
    )
    emit(
        workspace_id=workspace.pk,
        type="task.created",
        entity_type="task",
        entity_id=f"entity-{letter}",
        payload={},
    )
    return World(workspace, item.task, item.run, issue)


@pytest.fixture
def operator() -> Client:
    client = Client()
    client.force_login(User.objects.create_superuser(email="ops@example.com", password="x"))
    return client


def _queries(client: Client, url: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200, url
    return len(captured)


def test_an_operator_sees_every_changelist_and_each_row(operator: Client) -> None:
    world = _world(1)
    rows = [
        "Board B",
        world.task.title,
        str(world.run.run_id),
        world.task.title,
        "Crash B",
        "owner1@example.com",
        "entity-B",
    ]
    for url, row in zip(CHANGELISTS, rows, strict=True):
        page = operator.get(url)
        assert page.status_code == 200, url
        assert row in page.content.decode(), url
    index = operator.get("/admin/").content.decode()
    assert all(f'href="{url}"' in index for url in CHANGELISTS)
    today = timezone.localtime(world.task.created_at)
    by_day = {"created_at__year": today.year, "created_at__month": today.month, "created_at__day": today.day}
    assert world.task.title in operator.get("/admin/boards/task/", by_day).content.decode()
    task_page = operator.get(f"/admin/boards/task/{world.task.pk}/change/").content.decode()
    assert "Ship the release notes of tenant B" in task_page
    assert str(world.run.run_id) in task_page and "Agent B" in task_page  # the runs inline
    for url in (f"/admin/boards/run/{world.run.pk}/change/", f"/admin/issues/issue/{world.issue.pk}/change/"):
        assert operator.get(url).status_code == 200, url


def _listed(client: Client, url: str, q: str) -> str:
    return client.get(url, {"q": q}).content.decode()


def test_a_search_finds_a_task_by_title_by_id_and_by_workspace(operator: Client) -> None:
    first, second = _world(1), _world(2)
    other = "Ship the release notes of tenant C"
    by_title = _listed(operator, "/admin/boards/task/", '"notes of tenant B"')
    assert first.task.title in by_title and other not in by_title
    by_id = _listed(operator, "/admin/boards/task/", str(first.task.pk))
    assert first.task.title in by_id and other not in by_id
    by_workspace = _listed(operator, "/admin/boards/task/", first.workspace.slug)
    assert first.task.title in by_workspace and other not in by_workspace
    runs = _listed(operator, "/admin/boards/run/", str(second.run.run_id))
    assert second.task.title in runs and first.task.title not in runs  # the rows, not the search box
    issues = _listed(operator, "/admin/issues/issue/", '"Tenant C"')
    assert "Crash C" in issues and "Crash B" not in issues


def test_a_boards_task_count_leads_to_its_tasks(operator: Client) -> None:
    first, second = _world(1), _world(2)
    Task.objects.create(workspace=first.workspace, board=first.task.board, title="Plan the offsite")
    link = f'href="/admin/boards/task/?board__id__exact={first.task.board_id}">2</a>'
    assert link in _listed(operator, "/admin/boards/board/", first.workspace.slug)
    tasks = operator.get("/admin/boards/task/", {"board__id__exact": first.task.board_id}).content.decode()
    assert first.task.title in tasks and "Plan the offsite" in tasks and second.task.title not in tasks


def test_people_without_staff_are_refused(alice: User, ws_a: Workspace) -> None:
    assert Seat.objects.get(workspace=ws_a, user=alice).role == Seat.OWNER
    owner = Client()
    owner.force_login(alice)
    staff = Client()
    staff.force_login(User.objects.create_user(email="staff@example.com", password="x", is_staff=True))
    for url in CHANGELISTS:
        for client in (Client(), owner):
            response = client.get(url)
            assert response.status_code == 302 and response["Location"].startswith("/admin/login/"), url
        assert staff.get(url).status_code == 403, url


def test_nothing_forges_a_lease_or_changes_a_task(operator: Client) -> None:
    world = _world(1)
    run_url, task_url = f"/admin/boards/run/{world.run.pk}/", f"/admin/boards/task/{world.task.pk}/"
    later = (timezone.now() + timedelta(days=30)).strftime("%Y-%m-%d %H:%M:%S")
    forged = {"state": RunState.ACTIVE, "epoch": 99, "lease_expires_at": later}
    assert operator.post(f"{run_url}change/", forged).status_code == 403
    assert operator.post(f"{task_url}change/", {"column": "done", "epoch": 99}).status_code == 403
    for url in (run_url, task_url, f"/admin/boards/board/{world.task.board_id}/"):
        assert operator.post(f"{url}delete/", {"post": "yes"}).status_code == 403, url
    for url in ("/admin/boards/run/add/", "/admin/boards/task/add/", "/admin/boards/board/add/"):
        assert operator.get(url).status_code == 403, url
    run = Run.objects.get(pk=world.run.pk)
    assert (run.state, run.epoch, run.lease_expires_at) == (
        world.run.state,
        world.run.epoch,
        world.run.lease_expires_at,
    )
    assert Task.objects.get(pk=world.task.pk).column == world.task.column
    assert "lease_token_hash" not in operator.get(f"{run_url}change/").content.decode()


def test_an_issue_changes_only_through_the_triage(operator: Client) -> None:
    issue = _world(1).issue
    url = f"/admin/issues/issue/{issue.pk}/change/"
    unredacted = {"status": "resolved", "resolution": "fixed; the key is sk_live_0123456789abcdefghij"}
    assert operator.post(url, unredacted).status_code == 403
    assert operator.post(f"/admin/issues/issue/{issue.pk}/delete/", {"post": "yes"}).status_code == 403
    issue.refresh_from_db()
    assert (issue.status, issue.resolution) == ("open", "")
    page = operator.get(url).content.decode()
    assert issue.title in page and 'name="_save"' not in page


@pytest.mark.parametrize("url", CHANGELISTS)
def test_a_changelist_costs_the_same_queries_for_one_row_and_twenty(operator: Client, url: str) -> None:
    _world(0)
    one = _queries(operator, url)
    for n in range(1, 20):
        _world(n)
    assert _queries(operator, url) == one


def test_an_owners_plan_change_shows_in_the_admin(operator: Client, alice: User, ws_a: Workspace) -> None:
    assert "Acme" not in operator.get("/admin/accounts/planchange/").content.decode()
    seat = Seat.objects.select_related("workspace__plan", "user").get(workspace=ws_a, user=alice)
    plan_change_begin(
        seat=seat,
        plan_code="pro",
        period="monthly",
        payments=RecordedPayments(),
        success_url="/",
        cancel_url="/",
    )
    listed = operator.get("/admin/accounts/planchange/", {"q": ws_a.slug}).content.decode()
    assert "Acme" in listed and "alice@example.com" in listed and "Recorded" in listed
    change = PlanChange.objects.get(workspace=ws_a)
    page = operator.get(f"/admin/accounts/planchange/{change.pk}/change/").content.decode()
    assert "pro" in page and "monthly" in page
