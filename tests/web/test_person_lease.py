"""A person starts, moves and finishes a task from the board (and the task page): Start and Stop
in the card's menu, Done through Move; the card names the person, not an agent; a task in
another workspace is a 404; an approved next step and the step being carried out show on the card
and in the history."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import AgentConnection, User, Workspace
from boards.models import Column, Run, RunState, Task
from boards.services import inbox_decide, task_claim, task_create
from tests.boards.helpers import complete
from weft.models import Event


@pytest.fixture
def as_alice(alice: User) -> Client:
    client = Client()
    client.force_login(alice)
    return client


@pytest.fixture
def as_bob(bob: User) -> Client:
    client = Client()
    client.force_login(bob)
    return client


@pytest.fixture
def todo(ws_a: Workspace, alice: User) -> Task:
    return task_create(workspace=ws_a, title="Write the release notes", by_user=alice).task


def url(name: str, ws: Workspace, **kwargs: object) -> str:
    return reverse(f"boards:{name}", kwargs={"slug": ws.slug, **kwargs})


def card(body: str, task: Task) -> str:
    found = re.search(rf'<li class="task-card[^"]*" id="task-card-{task.pk}".*?</li>\n', body, flags=re.S)
    assert found, f"no card for #{task.pk}"
    return found.group(0)


def board_card(client: Client, ws: Workspace, task: Task) -> str:
    return card(client.get(url("board", ws)).content.decode(), task)


def test_a_person_starts_moves_and_finishes_a_task_from_the_board(as_alice, alice, ws_a, todo):
    before = board_card(as_alice, ws_a, todo)
    # The card's menu is filled from the page's template: the card names the targets it offers.
    assert f'data-start-url="{url("task_start", ws_a, task_id=todo.pk)}"' in before
    assert "data-stop-url" not in before

    started = as_alice.post(url("task_start", ws_a, task_id=todo.pk), follow=True)
    assert "it is yours in Doing" in started.content.decode()
    todo.refresh_from_db()
    assert todo.column == Column.DOING
    doing = card(started.content.decode(), todo)
    assert f"Started by {alice.display_name} (you)" in doing and "⚙" not in doing
    assert "data-start-url" not in doing
    assert f'data-stop-url="{url("task_stop", ws_a, task_id=todo.pk)}"' in doing

    # Move it on: back to Backlog releases the run; Start again, then Done finishes it.
    as_alice.post(url("task_move", ws_a, task_id=todo.pk), {"column": "backlog"})
    assert Run.objects.get(task=todo).state == RunState.RELEASED
    as_alice.post(url("task_start", ws_a, task_id=todo.pk))
    done = as_alice.post(url("task_move", ws_a, task_id=todo.pk), {"column": "done"}, follow=True)
    assert "Moved #" in done.content.decode()
    todo.refresh_from_db()
    assert (todo.column, todo.assignee_user_id) == (Column.DONE, None)
    assert sorted(Run.objects.filter(task=todo).values_list("state", flat=True)) == ["completed", "released"]
    assert list(
        Event.objects.filter(type__in=["run.completed", "task.moved"]).values_list("type", flat=True)
    )[-2:] == ["run.completed", "task.moved"]
    after = board_card(as_alice, ws_a, todo)
    assert "Started by" not in after and "data-start-url" not in after


def test_stop_puts_the_task_back_in_todo(as_alice, ws_a, todo):
    as_alice.post(url("task_start", ws_a, task_id=todo.pk))
    stopped = as_alice.post(url("task_stop", ws_a, task_id=todo.pk), follow=True)
    assert "back in Todo" in stopped.content.decode()
    todo.refresh_from_db()
    assert todo.column == Column.TODO and Run.objects.get(task=todo).state == RunState.RELEASED


def test_a_teammate_sees_who_holds_it_and_cannot_start_or_stop_it(as_alice, as_bob, alice, ws_a, todo):
    as_alice.post(url("task_start", ws_a, task_id=todo.pk))
    seen = board_card(as_bob, ws_a, todo)
    assert f"Started by {alice.display_name}" in seen and "(you)" not in seen
    assert "data-stop-url" not in seen and "data-start-url" not in seen
    refused = as_bob.post(url("task_start", ws_a, task_id=todo.pk), follow=True).content.decode()
    assert f"held by {alice.display_name}" in refused
    as_bob.post(url("task_stop", ws_a, task_id=todo.pk))
    run = Run.objects.get(task=todo)
    assert (run.user_id, run.state) == (alice.pk, RunState.ACTIVE)


def test_the_task_page_has_start_and_then_done_and_stop(as_alice, alice, ws_a, todo):
    page = url("task", ws_a, task_id=todo.pk)
    body = as_alice.get(page).content.decode()
    assert (
        url("task_start", ws_a, task_id=todo.pk) in body
        and url("task_stop", ws_a, task_id=todo.pk) not in body
    )
    back = as_alice.post(url("task_start", ws_a, task_id=todo.pk), {"next": page})
    assert back["Location"] == page
    body = as_alice.get(page).content.decode()
    assert f"Started by {alice.display_name} (you)" in body
    assert (
        url("task_stop", ws_a, task_id=todo.pk) in body
        and url("task_start", ws_a, task_id=todo.pk) not in body
    )
    assert f"{alice.display_name} started the task" in body


def test_an_agents_run_shows_the_agent_and_offers_no_start(as_alice, ws_a, agent, todo):
    task_claim(task_id=todo.pk, connection=agent)
    seen = board_card(as_alice, ws_a, todo)
    assert f"⚙ {agent.name}" in seen and "Started by" not in seen
    assert "data-start-url" not in seen and "data-stop-url" not in seen


@pytest.mark.parametrize("name", ["task_start", "task_stop"])
def test_a_task_of_another_workspace_is_not_found(as_alice, ws_a, ws_b, carol, name):
    foreign = task_create(workspace=ws_b, title="Theirs", by_user=carol).task
    response = as_alice.post(reverse(f"boards:{name}", kwargs={"slug": ws_b.slug, "task_id": foreign.pk}))
    assert response.status_code == 404
    # Under her own workspace's slug, the other workspace's task id names nothing either.
    response = as_alice.post(url(name, ws_a, task_id=foreign.pk))
    assert response.status_code == 404
    assert not Run.objects.filter(task=foreign).exists()


@pytest.mark.parametrize("name", ["task_start", "task_stop"])
def test_start_and_stop_answer_only_post(as_alice, ws_a, todo, name):
    assert as_alice.get(url(name, ws_a, task_id=todo.pk)).status_code == 405


def test_the_card_labels_an_approved_next_step_and_then_the_step_being_carried_out(
    as_alice, alice, ws_a, agent: AgentConnection
):
    task = task_create(workspace=ws_a, title="Ship the importer", review_required=True, by_user=alice).task
    result = complete(task_claim(task_id=task.pk, connection=agent), next_step="deploy to staging")
    inbox_decide(item=result.inbox_item, user=alice, decision="accept")
    accepted = board_card(as_alice, ws_a, task)
    assert "Approved next step: deploy to staging" in accepted

    task_claim(task_id=task.pk, connection=agent)
    doing = board_card(as_alice, ws_a, task)
    assert "Carrying out the approved step: deploy to staging" in doing
    assert "Approved next step:" not in doing
    page = as_alice.get(url("task", ws_a, task_id=task.pk)).content.decode()
    assert f"{agent.name} started the approved next step: deploy to staging" in page
    assert "Carrying out the approved step: deploy to staging" in page


def test_a_card_without_an_approval_says_nothing_of_one(as_alice, ws_a, agent, todo):
    task_claim(task_id=todo.pk, connection=agent)
    seen = board_card(as_alice, ws_a, todo)
    assert "approved" not in seen.lower()
