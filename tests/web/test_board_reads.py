"""The board and Inbox pages read without writing, and show what Python decided: a lease running
low, whether a run holds its task, who sent an Inbox item — the same reads agents get."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from boards.models import Board, InboxState, Task
from boards.payloads import HOLDER_GONE
from boards.selectors import board_state, inbox_for_user
from boards.services import task_claim, task_create
from tests.web.factories import make_question, make_review


@pytest.fixture
def as_alice(alice) -> Client:
    client = Client()
    client.force_login(alice)
    return client


def url(name, ws, **kwargs):
    return reverse(f"boards:{name}", kwargs={"slug": ws.slug, **kwargs})


def test_it_reads_a_workspace_without_a_board_without_creating_one(as_alice, ws_a):
    response = as_alice.get(url("board", ws_a))
    assert response.status_code == 200
    assert "<h1>Board</h1>" in response.content.decode()
    state = board_state(workspace=ws_a)
    assert state.payload()["board"] is None
    assert state.payload()["columns"] == {"backlog": [], "todo": [], "doing": [], "done": []}
    assert state.summary() == "No board yet: the first task created makes one."
    assert not Board.objects.filter(workspace=ws_a).exists()


def test_it_creates_the_first_board_with_the_first_task(as_alice, ws_a):
    as_alice.get(url("board", ws_a))
    response = as_alice.post(
        url("task_create", ws_a),
        {"title": "First task", "column": "todo", "priority": "1", "estimated_review_minutes": "5"},
    )
    assert response.status_code == 302
    board = Board.objects.get(workspace=ws_a)
    assert Task.objects.get(title="First task").board == board
    assert board_state(workspace=ws_a).payload()["board"] == {
        "id": board.pk,
        "name": board.name,
        "archived": False,
    }


@pytest.mark.usefixtures("moving_clock")
def test_a_card_shows_its_lease_low_under_five_minutes_left(as_alice, alice, ws_a, agent):
    task = task_create(workspace=ws_a, title="Renew me", by_user=alice).task
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        run = task_claim(task_id=task.pk, connection=agent).run
        assert "lease--low" not in as_alice.get(url("board", ws_a)).content.decode()
        traveller.move_to(run.lease_expires_at - timedelta(minutes=5))
        assert "lease--low" not in as_alice.get(url("board", ws_a)).content.decode()
        traveller.move_to(run.lease_expires_at - timedelta(minutes=5) + timedelta(seconds=1))
        assert "lease--low" in as_alice.get(url("board", ws_a)).content.decode()


@pytest.mark.usefixtures("moving_clock")
def test_the_task_page_shows_a_lease_only_while_the_run_holds_the_task(as_alice, alice, ws_a, agent):
    task = task_create(workspace=ws_a, title="Hold me", by_user=alice).task
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        run = task_claim(task_id=task.pk, connection=agent).run
        assert "lease until" in as_alice.get(url("task", ws_a, task_id=task.pk)).content.decode()
        traveller.move_to(run.lease_expires_at)
        assert "lease until" not in as_alice.get(url("task", ws_a, task_id=task.pk)).content.decode()


def test_the_inbox_page_lists_what_the_inbox_read_lists(as_alice, alice, ws_a, agent):
    now = timezone.now()
    review = make_review(ws_a, agent, created_at=now - timedelta(minutes=30))
    question = make_question(ws_a, agent, created_at=now - timedelta(minutes=10))
    later = make_review(ws_a, agent, title="Snoozed for later")
    later.state, later.snoozed_until = InboxState.SNOOZED, now + timedelta(hours=2)
    later.save()
    endless = make_review(ws_a, agent, title="Snoozed without an end")
    endless.state = InboxState.SNOOZED
    endless.save()

    inbox = inbox_for_user(workspace=ws_a, user=alice)
    assert [i.pk for i in inbox.open] == [review.pk, question.pk]
    assert [i.pk for i in inbox.snoozed] == [later.pk, endless.pk]
    response = as_alice.get(url("inbox", ws_a))
    assert [e.item.pk for e in response.context["entries"]] == [review.pk, question.pk]
    assert [i.pk for i in response.context["snoozed"]] == [later.pk, endless.pk]
    assert "From Claude Code" in response.content.decode()


def test_an_inbox_item_whose_sender_is_gone_names_them_as_every_surface_does(as_alice, ws_a, agent):
    make_review(ws_a, agent)
    agent.delete()
    body = as_alice.get(url("inbox", ws_a)).content.decode()
    assert f"From {HOLDER_GONE}" in body
