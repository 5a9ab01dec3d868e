"""Assignees and labels on the people's pages: a task is assigned to a member or an agent of its
own workspace (never another's), shown by display name with an initial (never the email when a
name exists); the board filters by "Assigned to me" and by label; a person sets their name."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import AgentConnection, User, Workspace
from boards.models import Task
from boards.payloads import task_payload
from boards.services import label_create, task_assign, task_claim, task_create
from tests.boards.helpers import refused, release
from weft.models import Event


@pytest.fixture
def as_alice(alice: User) -> Client:
    client = Client()
    client.force_login(alice)
    return client


@pytest.fixture
def task(ws_a: Workspace, alice: User) -> Task:
    return task_create(workspace=ws_a, title="Write the release notes", by_user=alice).task


def url(name: str, ws: Workspace, **kwargs: object) -> str:
    return reverse(f"boards:{name}", kwargs={"slug": ws.slug, **kwargs})


def _assigned(task: Task) -> tuple[int | None, int | None]:
    row = Task.objects.get(pk=task.pk)
    return row.assigned_user_id, row.assigned_connection_id


def test_a_person_assigns_a_member_and_the_card_shows_their_name_not_their_email(as_alice, ws_a, bob, task):
    bob.name = "Bob Stone"
    bob.save(update_fields=["name"])
    response = as_alice.post(url("task_assign", ws_a, task_id=task.pk), {"assignee": f"user:{bob.pk}"})
    assert response.status_code == 302 and _assigned(task) == (bob.pk, None)
    board = as_alice.get(url("board", ws_a)).content.decode()
    card = board[board.index(f'id="task-card-{task.pk}"') :]
    card = card[: card.index("</li>")]
    assert "Bob Stone" in card and "bob@example.com" not in card
    assert '<span class="avatar" aria-hidden="true">B</span>' in card
    page = as_alice.get(url("task", ws_a, task_id=task.pk)).content.decode()
    assert "Assigned to Bob Stone" in page
    assert f'<option value="user:{bob.pk}" selected>Bob Stone</option>' in page


def test_without_a_name_the_card_shows_the_emails_local_part(as_alice, ws_a, bob, task):
    task_assign(task=task, assignee=f"user:{bob.pk}")
    board = as_alice.get(url("board", ws_a)).content.decode()
    assert ">bob</span>" in board and "bob@example.com" not in board


def test_an_agent_connection_of_the_workspace_can_be_the_assignee(as_alice, ws_a, agent, task):
    as_alice.post(url("task_assign", ws_a, task_id=task.pk), {"assignee": f"agent:{agent.pk}"})
    assert _assigned(task) == (None, agent.pk)
    assert task_payload(Task.objects.get(pk=task.pk))["assignee"] == {
        "kind": "agent",
        "id": agent.pk,
        "name": "Claude Code",
    }
    assert "Claude Code" in as_alice.get(url("board", ws_a)).content.decode()


def test_a_foreign_person_or_agent_is_refused_and_never_stored(as_alice, ws_a, carol, ws_b, agent_b, task):
    refusals = {
        f"user:{carol.pk}": "Assignee: a member or an agent connection of this workspace",
        f"agent:{agent_b.pk}": "Assignee: a member or an agent connection of this workspace",
        "user:987654321": "Assignee: a member or an agent connection of this workspace",
        "robot:1": "Assignee: a member or an agent connection of this workspace",
        "user:1\x00": "Nothing was assigned: assignee: Null characters are not allowed.",
    }
    for foreign, text in refusals.items():
        response = as_alice.post(
            url("task_assign", ws_a, task_id=task.pk), {"assignee": foreign}, follow=True
        )
        assert response.status_code == 200
        assert text in response.content.decode(), foreign
        assert _assigned(task) == (None, None), foreign
    assert not Event.objects.filter(type="task.updated", entity_id=str(task.pk)).exists()
    refused("invalid_argument", task_assign, task=task, assignee="user:1\x00")


def test_a_revoked_connection_is_no_assignee(ws_a, alice, task):
    from django.utils import timezone

    gone = AgentConnection.objects.create(workspace=ws_a, user=alice, name="Old", revoked_at=timezone.now())
    refused("invalid_argument", task_assign, task=task, assignee=f"agent:{gone.pk}")
    assert _assigned(task) == (None, None)


def test_the_assignment_stays_through_a_claim_and_a_release(ws_a, bob, agent, task):
    task_assign(task=task, assignee=f"user:{bob.pk}")
    release(task_claim(task_id=task.pk, connection=agent))
    assert _assigned(task) == (bob.pk, None)


def test_assigning_emits_the_change_once(ws_a, bob, task):
    assert task_assign(task=task, assignee=f"user:{bob.pk}").action == "updated"
    assert task_assign(task=task, assignee=f"user:{bob.pk}").action == "unchanged"
    events = Event.objects.filter(type="task.updated", entity_id=str(task.pk))
    assert [e.payload for e in events] == [
        {
            "taskId": task.pk,
            "fields": ["assignee"],
            "assignee": {"kind": "person", "id": bob.pk, "name": "bob"},
        }
    ]
    assert task_assign(task=task, assignee="").action == "updated" and _assigned(task) == (None, None)


def test_assigned_to_me_shows_only_my_tasks(as_alice, ws_a, alice, bob, task):
    other = task_create(workspace=ws_a, title="Bob's chore", by_user=alice).task
    task_assign(task=task, assignee=f"user:{alice.pk}")
    task_assign(task=other, assignee=f"user:{bob.pk}")
    body = as_alice.get(url("board", ws_a), {"mine": "on"}).content.decode()
    assert "Write the release notes" in body and "Bob&#x27;s chore" not in body
    assert 'name="mine" value="on" checked' in body


def test_the_label_filter_and_the_task_page_labels(as_alice, ws_a, alice, task):
    label_create(workspace=ws_a, name="Docs", colour="teal")
    task_create(workspace=ws_a, title="Unlabelled chore", by_user=alice)
    saved = as_alice.post(url("task_labels", ws_a, task_id=task.pk), {"label": ["docs"]}, follow=True)
    assert "Labels saved: Docs." in saved.content.decode()
    body = as_alice.get(url("board", ws_a), {"label": "docs"}).content.decode()
    assert "Write the release notes" in body and "Unlabelled chore" not in body
    assert '<span class="label-chip label-chip--teal" title="Label">Docs</span>' in body
    as_alice.post(url("task_labels", ws_a, task_id=task.pk), {})
    assert task_payload(Task.objects.get(pk=task.pk))["labels"] == []


def test_a_new_label_from_the_task_page_and_its_limits(as_alice, ws_a, task):
    ok = as_alice.post(
        url("label_create", ws_a, task_id=task.pk), {"name": "x" * 40, "colour": "red"}, follow=True
    )
    assert "Added the label" in ok.content.decode()
    assert task_payload(Task.objects.get(pk=task.pk))["labels"] == ["x" * 40]
    long = as_alice.post(
        url("label_create", ws_a, task_id=task.pk), {"name": "y" * 41, "colour": "red"}, follow=True
    )
    assert "The label was not added" in long.content.decode()
    same = as_alice.post(
        url("label_create", ws_a, task_id=task.pk), {"name": "X" * 40, "colour": "blue"}, follow=True
    )
    assert "already has a label named" in same.content.decode()
    assert task_payload(Task.objects.get(pk=task.pk))["labels"] == ["x" * 40]


def test_a_person_sets_their_display_name_in_account_settings(as_alice, alice, ws_a, task):
    page = reverse("account_profile")
    assert as_alice.get(page).status_code == 200
    assert as_alice.post(page, {"name": "Alice Liddell"}).status_code == 302
    alice.refresh_from_db()
    assert alice.display_name == "Alice Liddell"
    assert as_alice.post(page, {"name": "a" * 151}).status_code == 400
    assert as_alice.post(page, {"name": "bad\x00name"}).status_code == 400
    alice.refresh_from_db()
    assert alice.name == "Alice Liddell"
    task_assign(task=task, assignee=f"user:{alice.pk}")
    board = as_alice.get(url("board", ws_a)).content.decode()
    assert "Alice Liddell" in board
    as_alice.post(page, {"name": ""})
    alice.refresh_from_db()
    assert alice.display_name == "alice"
