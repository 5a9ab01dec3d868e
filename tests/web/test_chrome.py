"""The header, the attention panel and the task history, as the pages render them."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import User
from boards import services
from boards.models import Decision
from tests.web.factories import make_review


@pytest.fixture
def as_alice(alice: User) -> Client:
    client = Client()
    client.force_login(alice)
    return client


def test_it_shows_the_inbox_and_the_meter_on_the_agent_pages(as_alice, ws_a, agent):
    make_review(ws_a, agent)
    for path in (reverse("connections"), reverse("agent_connect")):
        body = as_alice.get(path).content.decode()
        assert 'aria-label="1 waiting"' in body, path
        assert reverse("boards:inbox", kwargs={"slug": ws_a.slug}) in body, path


def test_it_explains_the_attention_meter_in_visible_text(as_alice, ws_a, agent):
    make_review(ws_a, agent)
    body = as_alice.get(reverse("boards:board", kwargs={"slug": ws_a.slug})).content.decode()
    assert "1 of 5 items wait on people; 5 of 45 minutes of review." in body
    assert "At the limit, agents are refused new work until someone decides." in body


def test_it_shows_no_workspace_chrome_to_someone_without_a_seat(carol, ws_a):
    client = Client()
    client.force_login(carol)
    assert 'id="weft-nav"' not in client.get(reverse("connections")).content.decode()


def test_it_writes_the_history_in_words_with_who_did_it(as_alice, alice, ws_a, agent):
    alice.name = "Ana"
    alice.save()
    task = services.task_create(workspace=ws_a, title="Ship it", review_required=True).task
    claim = services.task_claim(task_id=task.pk, connection=agent)
    services.run_heartbeat(
        workspace=ws_a, run_id=claim.run.run_id, lease_token=claim.lease_token, note="Half done"
    )
    done = services.run_complete(
        workspace=ws_a, run_id=claim.run.run_id, lease_token=claim.lease_token, outcome="Shipped."
    )
    assert done.inbox_item is not None
    services.inbox_decide(item=done.inbox_item, user=alice, decision=Decision.REWORK, note="Add the date")
    body = as_alice.get(
        reverse("boards:task", kwargs={"slug": ws_a.slug, "task_id": task.pk})
    ).content.decode()
    history = body[body.index('id="history-title"') :]
    for text in (
        "Claude Code started the task",
        "Claude Code reported progress: Half done",
        "Claude Code finished and sent the result for review",
        "Ana asked for rework: Add the date",
    ):
        assert text in history, text
    assert 'title="run.heartbeat · epoch 1"' in history
    assert ">run.heartbeat" not in history
