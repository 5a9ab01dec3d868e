"""Confirmations before revoking an agent or removing a member; Undo after Trash and Drop."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from boards import services
from boards.models import Column, Decision, InboxItem, InboxState, Task
from boards.services.inbox import UNDO_DROP_WINDOW
from tests.web.factories import make_question, make_review
from weft.errors import WeftError
from weft.models import Event


@pytest.fixture
def as_alice(alice: User) -> Client:
    client = Client()
    client.force_login(alice)
    return client


def burl(name: str, ws, **kwargs) -> str:
    return reverse(f"boards:{name}", kwargs={"slug": ws.slug, **kwargs})


def _drop(item: InboxItem, user: User) -> None:
    services.inbox_decide(item=item, user=user, decision=Decision.DROP)


def test_it_reopens_a_dropped_review_at_the_edge_of_the_window(moved_clock, alice, ws_a, agent):
    item = make_review(ws_a, agent)
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        _drop(item, alice)
        traveller.shift(UNDO_DROP_WINDOW)
        services.inbox_undo_drop(item=item, user=alice)
    item.refresh_from_db()
    assert (item.state, item.decision, item.decided_by) == (InboxState.OPEN, "", None)
    assert Task.objects.get(pk=item.task_id).column == Column.DOING
    event = Event.objects.filter(type="inbox.item_reopened").get()
    assert event.payload == {"itemId": item.pk, "taskId": item.task_id, "column": "doing", "userId": alice.pk}


def test_it_refuses_an_undo_one_second_past_the_window(moved_clock, alice, ws_a, agent):
    item = make_review(ws_a, agent)
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        _drop(item, alice)
        traveller.shift(UNDO_DROP_WINDOW + timedelta(seconds=1))
        with pytest.raises(WeftError) as refused:
            services.inbox_undo_drop(item=item, user=alice)
    assert "30 seconds" in refused.value.message
    assert InboxItem.objects.get(pk=item.pk).decision == Decision.DROP
    assert Task.objects.get(pk=item.task_id).column == Column.DROPPED


def test_it_refuses_a_second_undo_and_an_undo_after_the_task_moved(alice, ws_a, agent):
    item = make_review(ws_a, agent)
    _drop(item, alice)
    services.inbox_undo_drop(item=item, user=alice)
    with pytest.raises(WeftError):
        services.inbox_undo_drop(item=item, user=alice)
    other = make_review(ws_a, agent, title="Second")
    _drop(other, alice)
    Task.objects.filter(pk=other.task_id).update(column=Column.TODO)
    with pytest.raises(WeftError):
        services.inbox_undo_drop(item=other, user=alice)
    assert InboxItem.objects.get(pk=other.pk).decision == Decision.DROP


def test_it_refuses_to_undo_a_dropped_question(alice, ws_a, agent):
    item = make_question(ws_a, agent)
    _drop(item, alice)
    with pytest.raises(WeftError):
        services.inbox_undo_drop(item=item, user=alice)


def test_it_shows_an_undo_toast_after_a_drop_and_undoes_it(as_alice, ws_a, agent):
    item = make_review(ws_a, agent)
    page = as_alice.post(burl("inbox_decide", ws_a, item_id=item.pk), {"decision": "drop"}, follow=True)
    body = page.content.decode()
    undo = burl("inbox_undo_drop", ws_a, item_id=item.pk)
    assert f'action="{undo}"' in body and ">Undo</button>" in body and 'role="status"' in body
    as_alice.post(undo)
    assert InboxItem.objects.get(pk=item.pk).state == InboxState.OPEN


def test_it_offers_no_undo_after_dropping_a_question(as_alice, ws_a, agent):
    item = make_question(ws_a, agent)
    page = as_alice.post(burl("inbox_decide", ws_a, item_id=item.pk), {"decision": "drop"}, follow=True)
    assert ">Undo</button>" not in page.content.decode()


def test_it_shows_an_undo_toast_after_trash_that_restores_the_task(as_alice, alice, ws_a):
    task = services.task_create(workspace=ws_a, title="Tidy the docs", by_user=alice).task
    page = as_alice.post(burl("task_trash", ws_a, task_id=task.pk), follow=True)
    body = page.content.decode()
    assert f"Moved #{task.pk} Tidy the docs to Trash" in body
    restore = burl("task_restore", ws_a, task_id=task.pk)
    assert f'action="{restore}"' in body
    back = as_alice.post(restore, {"next": burl("board", ws_a)})
    assert back["Location"] == burl("board", ws_a)
    assert Task.objects.get(pk=task.pk).column == Column.TODO


def test_it_answers_404_for_another_workspaces_undo(ws_a, ws_b, agent, alice, carol):
    item = make_review(ws_a, agent)
    _drop(item, alice)
    client = Client()
    client.force_login(carol)
    assert client.post(burl("inbox_undo_drop", ws_b, item_id=item.pk)).status_code == 404
    assert InboxItem.objects.get(pk=item.pk).decision == Decision.DROP


def test_it_asks_before_revoking_an_agent(as_alice, agent):
    path = reverse("connection_revoke", kwargs={"connection_id": agent.pk})
    page = as_alice.get(path).content.decode()
    assert "Revoke Claude Code?" in page and f'action="{path}"' in page
    agent.refresh_from_db()
    assert agent.revoked_at is None
    as_alice.post(path)
    agent.refresh_from_db()
    assert agent.revoked_at is not None


def test_it_asks_before_removing_a_member(as_alice, ws_a, bob):
    seat = bob.seats.get(workspace=ws_a)
    path = reverse("member_remove", kwargs={"slug": ws_a.slug, "seat_id": seat.pk})
    members = as_alice.get(reverse("workspace_members", kwargs={"slug": ws_a.slug})).content.decode()
    assert f'href="{path}"' in members
    page = as_alice.get(path).content.decode()
    assert "Remove bob@example.com?" in page and ">Remove member</button>" in page
    assert bob.seats.filter(workspace=ws_a).exists()
    as_alice.post(path)
    assert not bob.seats.filter(workspace=ws_a).exists()


def test_it_answers_404_for_another_workspaces_confirmation(ws_a, bob, agent, carol, ws_b):
    client = Client()
    client.force_login(carol)
    seat = bob.seats.get(workspace=ws_a)
    assert client.get(reverse("connection_revoke", kwargs={"connection_id": agent.pk})).status_code == 404
    remove = reverse("member_remove", kwargs={"slug": ws_b.slug, "seat_id": seat.pk})
    assert client.get(remove).status_code == 404
