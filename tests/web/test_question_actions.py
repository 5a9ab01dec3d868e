"""Later and Drop on a question in the Inbox, through the web views (answering is in test_views)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import AgentConnection, User, Workspace
from boards.models import Column, InboxItem, InboxState, Question, QuestionState, Task
from boards.services import work_for_connection
from tests.web.factories import make_question


@pytest.fixture
def as_alice(alice: User) -> Client:
    client = Client()
    client.force_login(alice)
    return client


def url(name: str, ws: Workspace, **kwargs: object) -> str:
    return reverse(f"boards:{name}", kwargs={"slug": ws.slug, **kwargs})


def waiting_ids(agent: AgentConnection) -> list[int]:
    return [row["id"] for row in work_for_connection(connection=agent).payload()["waitingOnPeople"]]


def test_a_question_offers_later_and_drop_beside_its_answers(as_alice, ws_a, agent):
    item = make_question(ws_a, agent)
    body = as_alice.get(url("inbox", ws_a)).content.decode()
    start = body.index(f'id="inbox-item-{item.pk}"')
    section = body[start : body.index("</li>", start)]
    decide = url("inbox_decide", ws_a, item_id=item.pk)
    assert 'value="Postgres"' in section
    assert section.index("Send answer") < section.index('data-key="l"') < section.index('data-key="d"')
    assert section.count(f'action="{decide}"') == 2
    for snooze in ("1h", "4h", "tomorrow"):
        assert f'name="snooze" value="{snooze}"' in section
    assert "Drop this question on" in section
    assert ">Yes, drop it</button>" in section
    # Accept and Rework belong to reviews only.
    assert 'data-key="a"' not in section and "Rework…" not in section


@pytest.mark.parametrize(("snooze", "hours"), [("1h", 1), ("4h", 4), ("tomorrow", 24)])
def test_it_snoozes_a_question_for_later(as_alice, ws_a, agent, snooze, hours):
    item = make_question(ws_a, agent)
    before = timezone.now()
    response = as_alice.post(
        url("inbox_decide", ws_a, item_id=item.pk),
        {"decision": "later", "snooze": snooze},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    assert "Snoozed" in response.content.decode()
    assert f'data-remove-item="{item.pk}"' in response.content.decode()
    item.refresh_from_db()
    assert (item.state, item.decision) == (InboxState.SNOOZED, "later")
    assert item.snoozed_until is not None
    assert timedelta(hours=hours) <= item.snoozed_until - before < timedelta(hours=hours, minutes=1)
    # Snoozed, not closed: the question stays open for an answer when it comes back.
    assert Question.objects.get(inbox_item=item).state == QuestionState.OPEN
    body = as_alice.get(url("inbox", ws_a)).content.decode()
    assert f'id="inbox-item-{item.pk}"' not in body
    assert "Later (1)" in body


def test_it_drops_a_question_and_the_agent_stops_waiting_for_it(as_alice, ws_a, agent):
    item = make_question(ws_a, agent)
    assert waiting_ids(agent) == [item.pk]
    response = as_alice.post(
        url("inbox_decide", ws_a, item_id=item.pk), {"decision": "drop"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    text = response.content.decode()
    assert "Question dropped — the agent no longer waits for an answer." in text
    assert "message--success" in text
    item.refresh_from_db()
    assert (item.state, item.decision, item.decided_by) == (
        InboxState.DECIDED,
        "drop",
        User.objects.get(email="alice@example.com"),
    )
    assert Question.objects.get(inbox_item=item).state == QuestionState.CANCELLED
    # Dropping the question does not drop the task.
    assert Task.objects.get(pk=item.task_id).column == Column.DOING
    assert waiting_ids(agent) == []
    work = work_for_connection(connection=agent)
    assert all(not run["openQuestions"] for run in work.payload()["held"])
    assert f'id="inbox-item-{item.pk}"' not in as_alice.get(url("inbox", ws_a)).content.decode()


def test_a_dropped_question_can_no_longer_be_answered(as_alice, ws_a, agent):
    item = make_question(ws_a, agent)
    as_alice.post(url("inbox_decide", ws_a, item_id=item.pk), {"decision": "drop"})
    response = as_alice.post(
        url("question_answer", ws_a, question_id=item.question_id),
        {"answer": "Postgres"},
        HTTP_HX_REQUEST="true",
    )
    assert "Already decided — nothing changed." in response.content.decode()
    question = Question.objects.get(inbox_item=item)
    assert (question.state, question.answer) == (QuestionState.CANCELLED, "")


def test_it_refuses_accept_on_a_question(as_alice, ws_a, agent):
    item = make_question(ws_a, agent)
    response = as_alice.post(
        url("inbox_decide", ws_a, item_id=item.pk), {"decision": "accept"}, HTTP_HX_REQUEST="true"
    )
    assert "message--error" in response.content.decode()
    assert InboxItem.objects.get(pk=item.pk).state == InboxState.OPEN
