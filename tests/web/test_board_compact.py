"""The board that scales: compact cards with a closed menu, the list view with sorting and bulk
actions, filters that apply as you type, and the command palette's actions."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import User, Workspace
from boards.models import Board, Column, Task
from boards.services import BULK_TASKS, task_claim, task_create
from weft.models import Event


@pytest.fixture
def as_alice(alice: User) -> Client:
    client = Client()
    client.force_login(alice)
    return client


def url(name: str, ws: Workspace, **kwargs: object) -> str:
    return reverse(f"boards:{name}", kwargs={"slug": ws.slug, **kwargs})


def _tasks(ws: Workspace, count: int, column: str = Column.BACKLOG) -> list[Task]:
    board = Board.objects.filter(workspace=ws).first() or Board.objects.create(workspace=ws, name="Main")
    Task.objects.bulk_create(
        Task(workspace=ws, board=board, title=f"Card {n:02}", column=column, position=n) for n in range(count)
    )
    return list(Task.objects.filter(workspace=ws).order_by("pk"))


def _outside_menus(body: str) -> str:
    return re.sub(r'<details class="card-menu">.*?</details>', "", body, flags=re.S)


def test_a_card_carries_no_form_but_a_closed_menu_filled_from_one_template(as_alice, ws_a):
    _tasks(ws_a, 45)
    body = as_alice.get(url("board", ws_a)).content.decode()
    assert body.count('<details class="card-menu">') == 45
    assert '<details class="card-menu" open' not in body
    cards = re.findall(r'<li class="task-card.*?</li>\n', body, flags=re.S)
    assert len(cards) == 45
    assert all("<form" not in card and "csrfmiddlewaretoken" not in card for card in cards)
    first = cards[0]
    assert 'aria-label="Actions for #' in first and "or trash it on its page" in first
    assert 'draggable="true"' in first and "data-move-url=" in first and "data-trash-url=" in first
    assert 'aria-label="45 tasks">45</span>' in body
    # The forms exist once, in the template the menus are filled from.
    template = re.search(r'<template id="card-menu-template">.*?</template>', body, flags=re.S)
    assert template and "Move to…" in template.group(0) and ">Trash</button>" in template.group(0)
    assert body.count("csrfmiddlewaretoken") < 10


def test_a_card_in_doing_names_doing_for_the_menus_disabled_choice(as_alice, alice, ws_a, agent):
    task = task_create(workspace=ws_a, title="Being worked on", by_user=alice).task
    task_claim(task_id=task.pk, connection=agent)
    body = as_alice.get(url("board", ws_a)).content.decode()
    assert 'data-menu-column="doing" data-menu-label="Doing"' in body
    assert "⚙ Claude Code" in body


def test_the_filter_form_applies_as_you_type_with_apply_kept_for_no_js(as_alice, ws_a):
    body = as_alice.get(url("board", ws_a)).content.decode()
    form = re.search(r'<form method="get" class="form--inline board-filter".*?</form>', body, flags=re.S)
    assert form is not None
    assert 'hx-trigger="input delay:300ms, submit"' in form.group(0)
    assert 'hx-select="#board-view"' in form.group(0)
    assert re.sub(r"<noscript>.*?</noscript>", "", form.group(0), flags=re.S).count("<button") == 0
    assert "<noscript><button" in form.group(0)


@pytest.mark.parametrize("query", ["x" * 201, "nul\x00byte"])
def test_a_search_past_its_limit_or_with_a_nul_says_so(as_alice, ws_a, query):
    _tasks(ws_a, 2)
    body = as_alice.get(url("board", ws_a), {"q": query}).content.decode()
    assert "Filters ignored: q:" in body
    assert "Card 00" in body and "Card 01" in body


def test_a_search_at_its_limit_is_taken(as_alice, ws_a):
    _tasks(ws_a, 1)
    body = as_alice.get(url("board", ws_a), {"q": "x" * 200}).content.decode()
    assert "Filters ignored" not in body and "Card 00" not in body


def _rows(body: str) -> list[str]:
    return re.findall(r'<tr id="task-row-(\d+)"', body)


def test_the_list_view_sorts_by_each_header(as_alice, alice, ws_a):
    now = timezone.now()
    a = task_create(workspace=ws_a, title="b middle", by_user=alice, priority=1, column="backlog").task
    b = task_create(
        workspace=ws_a, title="A first", by_user=alice, priority=3, due_at=now + timedelta(days=2)
    ).task
    c = task_create(
        workspace=ws_a, title="c last", by_user=alice, priority=0, due_at=now + timedelta(days=1)
    ).task
    Task.objects.filter(pk=c.pk).update(column=Column.DONE)
    order = {
        "title": [b, a, c],
        "-title": [c, a, b],
        "priority": [c, a, b],
        "-priority": [b, a, c],
        "column": [a, b, c],
        "-column": [c, b, a],
        "due": [c, b, a],
        "-due": [b, c, a],
        "updated": [a, b, c],
        "-updated": [c, b, a],
    }
    for sort, expected in order.items():
        body = as_alice.get(url("board", ws_a), {"view": "list", "sort": sort}).content.decode()
        assert _rows(body) == [str(t.pk) for t in expected], sort


def test_the_list_headers_are_links_that_toggle_the_current_sort(as_alice, alice, ws_a):
    task_create(workspace=ws_a, title="One", by_user=alice)
    body = as_alice.get(url("board", ws_a), {"view": "list", "sort": "title", "q": "On"}).content.decode()
    assert '<th scope="col" aria-sort="ascending"><a href="?q=On&amp;view=list&amp;sort=-title"' in body
    assert '<th scope="col" aria-sort="none"><a href="?q=On&amp;view=list&amp;sort=priority"' in body
    body = as_alice.get(url("board", ws_a), {"view": "list", "sort": "-title"}).content.decode()
    assert 'aria-sort="descending"><a href="?view=list&amp;sort=title"' in body
    body = as_alice.get(url("board", ws_a), {"view": "list", "sort": "bogus"}).content.decode()
    assert 'aria-sort="descending"><a href="?view=list&amp;sort=updated"' in body


def test_the_page_switches_between_board_and_list_keeping_the_filters(as_alice, alice, ws_a):
    task_create(workspace=ws_a, title="Alpha", by_user=alice)
    body = as_alice.get(url("board", ws_a), {"q": "Alpha"}).content.decode()
    assert '<a href="?q=Alpha&amp;view=list">List</a>' in body
    assert 'id="board-columns"' in body and 'id="bulk-form"' not in body
    body = as_alice.get(url("board", ws_a), {"q": "Alpha", "view": "list"}).content.decode()
    assert '<a href="?q=Alpha&amp;view=board">Board</a>' in body
    assert 'id="bulk-form"' in body and 'id="board-columns"' not in body
    assert "data-select-all" in body and 'name="task" value=' in body


def test_the_palette_lists_inbox_board_list_trash_and_new_task(as_alice, ws_a):
    body = as_alice.get(url("board", ws_a)).content.decode()
    dialog = re.search(r'<dialog id="palette".*?</dialog>', body, flags=re.S)
    assert dialog is not None
    for label in ("Go to Inbox", "Go to Board", "Go to List", "Go to Trash", "New task"):
        assert label in dialog.group(0)
    assert "js/palette.js" in body


def _bulk(client: Client, ws: Workspace, ids: list[object], follow: bool = False, **data: object):
    return client.post(url("tasks_bulk", ws), {"task": [str(i) for i in ids], **data}, follow=follow)


def test_it_moves_ticked_tasks_from_the_list(as_alice, ws_a):
    tasks = _tasks(ws_a, 50)
    response = _bulk(as_alice, ws_a, [t.pk for t in tasks], action="move", column="todo")
    assert response.status_code == 302
    assert response["Location"].endswith("?view=list")
    assert Task.objects.filter(column=Column.TODO).count() == 50
    assert Event.objects.filter(workspace=ws_a, type="task.moved").count() == 50
    body = as_alice.get(response["Location"]).content.decode()
    assert "Moved 50 tasks to Todo." in body


def test_it_sets_priority_and_trashes_from_the_list(as_alice, ws_a):
    first, second = _tasks(ws_a, 2)
    _bulk(as_alice, ws_a, [first.pk, second.pk], action="priority", priority="3")
    assert set(Task.objects.values_list("priority", flat=True)) == {3}
    response = _bulk(as_alice, ws_a, [first.pk], action="trash")
    assert Task.objects.get(pk=first.pk).column == Column.TRASH
    assert "Moved 1 task to the trash" in as_alice.get(response["Location"]).content.decode()


def test_a_foreign_id_in_a_bulk_request_is_a_404_and_changes_nothing(as_alice, ws_a, ws_b):
    (mine,) = _tasks(ws_a, 1)
    (theirs,) = _tasks(ws_b, 1)
    response = _bulk(as_alice, ws_a, [mine.pk, theirs.pk], action="trash")
    assert response.status_code == 404
    assert not Task.objects.filter(column=Column.TRASH).exists()


def test_a_bulk_request_past_the_cap_is_refused_with_a_message(as_alice, ws_a):
    tasks = _tasks(ws_a, BULK_TASKS + 1)
    response = _bulk(as_alice, ws_a, [t.pk for t in tasks], action="trash", follow=True)
    assert "at most 200 tasks at once; 201 were chosen" in response.content.decode()
    assert not Task.objects.filter(column=Column.TRASH).exists()


def test_a_held_task_refuses_the_bulk_move_with_a_message(as_alice, alice, ws_a, agent):
    free = task_create(workspace=ws_a, title="Free", by_user=alice).task
    held = task_create(workspace=ws_a, title="Held", by_user=alice).task
    task_claim(task_id=held.pk, connection=agent)
    response = _bulk(as_alice, ws_a, [free.pk, held.pk], action="move", column="done", follow=True)
    assert f"Nothing changed: #{held.pk} cannot take this action" in response.content.decode()
    assert Task.objects.get(pk=free.pk).column == Column.TODO


@pytest.mark.parametrize(
    ("data", "text"),
    [
        ({"action": "explode"}, "Nothing changed: action:"),
        ({"action": "move", "column": "doing"}, "Nothing changed: column:"),
        ({"action": "priority"}, "Priority: one of [0, 1, 2, 3]"),
        ({"action": "move"}, "Column: one of backlog, todo, done, dropped"),
    ],
)
def test_a_bulk_request_without_a_valid_target_says_what_is_missing(as_alice, ws_a, data, text):
    (task,) = _tasks(ws_a, 1)
    response = _bulk(as_alice, ws_a, [task.pk], follow=True, **data)
    assert text in response.content.decode()
    assert Task.objects.get(pk=task.pk).column == Column.BACKLOG


def test_a_bulk_request_without_ticked_tasks_says_so(as_alice, ws_a):
    response = as_alice.post(url("tasks_bulk", ws_a), {"action": "trash"}, follow=True)
    assert "Ids: choose at least one task" in response.content.decode()


def test_the_new_task_form_explains_review_minutes_in_visible_text(as_alice, ws_a):
    body = as_alice.get(url("board", ws_a)).content.decode()
    assert 'aria-describedby="new-minutes-help"' in body
    help_text = re.search(r'<p id="new-minutes-help"[^>]*>(.*?)</p>', body, flags=re.S)
    assert help_text and "attention budget" in help_text.group(1)
