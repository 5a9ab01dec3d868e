"""The people's pages: board, task, trash and the Inbox's four answers, through the web views."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import User, Workspace
from boards.models import Approval, Column, InboxItem, InboxState, Question, QuestionState, Task
from boards.services import task_create
from tests.web.factories import make_question, make_review


@pytest.fixture
def as_alice(alice: User) -> Client:
    client = Client()
    client.force_login(alice)
    return client


def url(name: str, ws: Workspace, **kwargs: object) -> str:
    return reverse(f"boards:{name}", kwargs={"slug": ws.slug, **kwargs})


def test_it_shows_the_board_with_its_four_columns(as_alice, alice, ws_a, agent):
    task_create(workspace=ws_a, title="Ship the release", by_user=alice, priority=3, review_required=True)
    response = as_alice.get(url("board", ws_a))
    assert response.status_code == 200
    body = response.content.decode()
    for label in ("Backlog", "Todo", "Doing", "Done"):
        assert f">{label} <span" in body
    assert "Ship the release" in body
    assert "Urgent" in body
    assert 'id="weft-nav"' in body


def test_it_filters_and_searches_the_board(as_alice, alice, ws_a):
    task_create(workspace=ws_a, title="Alpha report", by_user=alice, priority=2)
    task_create(workspace=ws_a, title="Beta migration", by_user=alice, review_required=True)
    body = as_alice.get(url("board", ws_a), {"q": "alpha"}).content.decode()
    assert "Alpha report" in body and "Beta migration" not in body
    body = as_alice.get(url("board", ws_a), {"review": "on"}).content.decode()
    assert "Beta migration" in body and "Alpha report" not in body
    body = as_alice.get(url("board", ws_a), {"priority": "2"}).content.decode()
    assert "Alpha report" in body and "Beta migration" not in body


def test_it_creates_edits_moves_trashes_and_restores_a_task(as_alice, ws_a):
    response = as_alice.post(
        url("task_create", ws_a),
        {"title": "Draft the FAQ", "column": "backlog", "priority": "1", "estimated_review_minutes": "5"},
    )
    assert response.status_code == 302
    task = Task.objects.get(title="Draft the FAQ")
    assert task.column == Column.BACKLOG

    as_alice.post(
        url("task_edit", ws_a, task_id=task.pk),
        {
            "title": "Draft the FAQ page",
            "description": "Ten questions",
            "priority": "2",
            "estimated_review_minutes": "10",
        },
    )
    task.refresh_from_db()
    assert (task.title, task.priority, task.estimated_review_minutes) == ("Draft the FAQ page", 2, 10)

    as_alice.post(url("task_move", ws_a, task_id=task.pk), {"column": "todo"})
    task.refresh_from_db()
    assert task.column == Column.TODO

    as_alice.post(url("task_trash", ws_a, task_id=task.pk))
    task.refresh_from_db()
    assert task.column == Column.TRASH
    assert "Draft the FAQ page" in as_alice.get(url("trash", ws_a)).content.decode()

    as_alice.post(url("task_restore", ws_a, task_id=task.pk))
    task.refresh_from_db()
    assert task.column == Column.TODO


def test_it_refuses_a_move_into_doing(as_alice, alice, ws_a):
    task = task_create(workspace=ws_a, title="Wait for an agent", by_user=alice).task
    response = as_alice.post(
        url("task_move", ws_a, task_id=task.pk), {"column": "doing"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 400
    task.refresh_from_db()
    assert task.column == Column.TODO


def test_it_shows_the_run_timeline_and_history(as_alice, ws_a, agent):
    item = make_review(ws_a, agent, next_step="Publish the changelog")
    body = as_alice.get(url("task", ws_a, task_id=item.task_id)).content.decode()
    assert "Run timeline" in body
    assert "Claude Code" in body
    assert "Changelog written for 1.4." in body
    assert 'href="https://example.com/changelog"' in body
    assert "Publish the changelog" in body


def test_it_never_links_an_unsafe_artifact(as_alice, ws_a, agent):
    item = make_review(ws_a, agent)
    report = item.report
    assert report is not None
    report.artifacts = [{"kind": "url", "uri": "javascript:alert(1)"}]
    report.save()
    for page in (url("task", ws_a, task_id=item.task_id), url("inbox", ws_a)):
        body = as_alice.get(page).content.decode()
        assert 'href="javascript:' not in body
        assert "javascript:alert(1)" in body


def test_it_lists_the_inbox_oldest_first_with_ages(as_alice, ws_a, agent):
    now = timezone.now()
    newer = make_review(ws_a, agent, title="Newer review", created_at=now - timedelta(minutes=3))
    older = make_question(ws_a, agent, created_at=now - timedelta(minutes=42))
    body = as_alice.get(url("inbox", ws_a)).content.decode()
    assert body.index(f'id="inbox-item-{older.pk}"') < body.index(f'id="inbox-item-{newer.pk}"')
    assert "waiting 42 min" in body
    assert "Postgres or SQLite?" in body
    assert 'value="Postgres"' in body


def test_it_puts_the_next_step_above_accept(as_alice, ws_a, agent):
    make_review(ws_a, agent, next_step="Tag release 1.4")
    body = as_alice.get(url("inbox", ws_a)).content.decode()
    assert "If you accept, the agent will:" in body
    assert body.index("Tag release 1.4") < body.index(">Accept</button>")


def test_it_accepts_a_review(as_alice, ws_a, agent):
    item = make_review(ws_a, agent, next_step="Tag release 1.4")
    response = as_alice.post(url("inbox_decide", ws_a, item_id=item.pk), {"decision": "accept"})
    assert response.status_code == 302
    item.refresh_from_db()
    assert (item.state, item.decision) == (InboxState.DECIDED, "accept")
    assert Task.objects.get(pk=item.task_id).column == Column.DONE
    assert Approval.objects.get(inbox_item=item).step == "Tag release 1.4"


def test_it_sends_back_for_rework_only_with_a_note(as_alice, ws_a, agent):
    item = make_review(ws_a, agent)
    response = as_alice.post(
        url("inbox_decide", ws_a, item_id=item.pk),
        {"decision": "rework", "note": " "},
        HTTP_HX_REQUEST="true",
    )
    assert "Say what to change" in response.content.decode()
    item.refresh_from_db()
    assert item.state == InboxState.OPEN

    as_alice.post(url("inbox_decide", ws_a, item_id=item.pk), {"decision": "rework", "note": "Add the date"})
    item.refresh_from_db()
    assert (item.decision, item.note) == ("rework", "Add the date")
    assert Task.objects.get(pk=item.task_id).column == Column.TODO


@pytest.mark.parametrize(("snooze", "hours"), [("1h", 1), ("4h", 4), ("tomorrow", 24)])
def test_it_snoozes_a_review_for_later(as_alice, ws_a, agent, snooze, hours):
    item = make_review(ws_a, agent)
    before = timezone.now()
    as_alice.post(url("inbox_decide", ws_a, item_id=item.pk), {"decision": "later", "snooze": snooze})
    item.refresh_from_db()
    assert item.state == InboxState.SNOOZED
    assert item.snoozed_until is not None
    assert timedelta(hours=hours) <= item.snoozed_until - before < timedelta(hours=hours, minutes=1)
    body = as_alice.get(url("inbox", ws_a)).content.decode()
    assert f'id="inbox-item-{item.pk}"' not in body
    assert "Later (1)" in body


def test_it_drops_a_review(as_alice, ws_a, agent):
    item = make_review(ws_a, agent)
    as_alice.post(url("inbox_decide", ws_a, item_id=item.pk), {"decision": "drop"})
    assert Task.objects.get(pk=item.task_id).column == Column.DROPPED


@pytest.mark.parametrize("field", ["answer", "answer_text"])
def test_it_answers_a_question(as_alice, ws_a, agent, field):
    item = make_question(ws_a, agent)
    response = as_alice.post(
        url("question_answer", ws_a, question_id=item.question_id),
        {field: "Postgres"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    assert "Answered" in response.content.decode()
    question = Question.objects.get(inbox_item=item)
    assert (question.state, question.answer) == (QuestionState.ANSWERED, "Postgres")


def test_it_refuses_a_second_decision_and_changes_nothing(as_alice, ws_a, agent, bob):
    item = make_review(ws_a, agent)
    as_alice.post(url("inbox_decide", ws_a, item_id=item.pk), {"decision": "accept"})
    other = Client()
    other.force_login(bob)
    response = other.post(
        url("inbox_decide", ws_a, item_id=item.pk), {"decision": "drop"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    assert "Already decided — nothing changed." in response.content.decode()
    item.refresh_from_db()
    assert (item.decision, item.decided_by) == ("accept", User.objects.get(email="alice@example.com"))
    assert Task.objects.get(pk=item.task_id).column == Column.DONE

    response = other.post(url("inbox_decide", ws_a, item_id=item.pk), {"decision": "drop"}, follow=True)
    assert "Already decided — nothing changed." in response.content.decode()


def test_it_refuses_a_second_answer(as_alice, ws_a, agent):
    item = make_question(ws_a, agent)
    as_alice.post(url("question_answer", ws_a, question_id=item.question_id), {"answer": "Postgres"})
    response = as_alice.post(
        url("question_answer", ws_a, question_id=item.question_id),
        {"answer": "SQLite"},
        HTTP_HX_REQUEST="true",
    )
    assert "Already decided" in response.content.decode()
    assert Question.objects.get(inbox_item=item).answer == "Postgres"


def test_it_shows_the_inbox_count_and_attention_in_the_nav(as_alice, ws_a, agent):
    make_review(ws_a, agent)
    make_question(ws_a, agent)
    body = as_alice.get(url("board", ws_a)).content.decode()
    assert 'aria-label="2 waiting"' in body
    assert "Attention 2/5" in body


def test_it_answers_404_for_another_workspaces_item(ws_a, ws_b, agent, carol):
    item = make_review(ws_a, agent)
    client = Client()
    client.force_login(carol)
    assert (
        client.post(
            reverse("boards:inbox_decide", kwargs={"slug": ws_b.slug, "item_id": item.pk}),
            {"decision": "accept"},
        ).status_code
        == 404
    )
    assert InboxItem.objects.get(pk=item.pk).state == InboxState.OPEN
