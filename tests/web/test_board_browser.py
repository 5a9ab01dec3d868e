"""The board in Chromium: 200 tasks stay within two screen heights per column, the new-task
form's fields lie apart with Title focused, filters apply as you type, the keys (j/k, Enter, `/`,
`c`) and the Ctrl-K palette work, and the list view's "select all" feeds a bulk move."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.conf import settings
from django.test import Client

from accounts.models import User, Workspace
from boards import services
from boards.models import Board, Column, Task
from tests.web.live import CHROMIUM, LiveServer, browser, file_database, live

DESKTOP = (1280, 800)
PHONE = (390, 844)
BOARD_TASKS = 200

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's Chromium at /usr/bin/chromium"),
    pytest.mark.django_db(transaction=True),
]

__all__ = ["browser", "file_database", "live"]  # fixtures: pytest finds them in this module


@pytest.fixture
def open_board(browser: Any, live: LiveServer, alice: User) -> Iterator[Callable[..., Any]]:
    contexts: list[Any] = []

    def open_(path: str, size: tuple[int, int] = DESKTOP) -> Any:
        context = browser.new_context(base_url=live.url, viewport={"width": size[0], "height": size[1]})
        context.set_default_timeout(8000)
        contexts.append(context)
        client = Client()
        client.force_login(alice)
        cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
        context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": cookie, "url": live.url}])
        page = context.new_page()
        page.goto(path)
        page.wait_for_selector('#weft-live[data-state="live"]')
        return page

    yield open_
    for context in contexts:
        context.close()


def _seed(ws: Workspace, count: int, column: str = Column.BACKLOG) -> list[Task]:
    board = Board.objects.filter(workspace=ws).first() or Board.objects.create(workspace=ws, name="Main")
    Task.objects.bulk_create(
        Task(workspace=ws, board=board, title=f"Card {n:03}", column=column, position=n) for n in range(count)
    )
    return list(Task.objects.filter(workspace=ws).order_by("position"))


def test_a_column_of_200_tasks_stays_under_two_screen_heights(open_board, ws_a):
    _seed(ws_a, BOARD_TASKS)
    page = open_board(f"/w/{ws_a.slug}/board/")
    assert page.locator('[data-column="backlog"] .task-card').count() == BOARD_TASKS
    heights = page.evaluate(
        "() => [...document.querySelectorAll('section.column')].map(c => c.getBoundingClientRect().height)"
    )
    assert len(heights) == 4 and max(heights) < 2 * DESKTOP[1], heights
    page_height = page.evaluate("() => document.documentElement.scrollHeight")
    assert page_height < 2 * DESKTOP[1], page_height
    # The column scrolls inside itself: its last card is reachable.
    last = page.locator('[data-column="backlog"] .task-card').last
    last.scroll_into_view_if_needed()
    assert last.is_visible()


def _boxes(page: Any) -> dict[str, dict[str, float]]:
    return dict(
        page.evaluate(
            """() => Object.fromEntries([...document.querySelectorAll('.new-task__form .field')].map(
                 f => [f.querySelector('label').textContent.trim(), f.getBoundingClientRect().toJSON()]))"""
        )
    )


def _overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    across = a["left"] < b["right"] and b["left"] < a["right"]
    return across and a["top"] < b["bottom"] and b["top"] < a["bottom"]


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_new_task_form_opens_on_title_with_its_fields_apart(open_board, ws_a, size):
    page = open_board(f"/w/{ws_a.slug}/board/", size)
    page.get_by_text("New task", exact=True).click()
    page.wait_for_function("() => document.activeElement.id === 'new-title'")  # toggle fires after the click
    boxes = _boxes(page)
    assert {"Title", "Description", "Column", "Priority", "Due", "Review minutes"} <= set(boxes)
    names = sorted(boxes)
    clashes = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :] if _overlap(boxes[a], boxes[b])]
    assert clashes == []
    right = max(box["right"] for box in boxes.values())
    assert right <= size[0], boxes


def test_the_filter_applies_as_you_type(open_board, alice, ws_a):
    services.task_create(workspace=ws_a, title="Rotate the signing key", by_user=alice)
    services.task_create(workspace=ws_a, title="Write the changelog", by_user=alice)
    page = open_board(f"/w/{ws_a.slug}/board/")
    page.fill("#id_q", "signing")
    page.wait_for_function("() => document.querySelectorAll('.task-card').length === 1")
    assert "Rotate the signing key" in page.locator(".task-card").inner_text()
    assert "q=signing" in page.url


def test_j_k_enter_slash_and_c_work_on_the_board(open_board, ws_a):
    first, second = _seed(ws_a, 2, Column.TODO)
    page = open_board(f"/w/{ws_a.slug}/board/")
    page.keyboard.press("j")
    assert page.locator(".is-key-focus").get_attribute("data-task-id") == str(first.pk)
    page.keyboard.press("j")
    assert page.locator(".is-key-focus").get_attribute("data-task-id") == str(second.pk)
    page.keyboard.press("k")
    assert page.locator(".is-key-focus").get_attribute("data-task-id") == str(first.pk)
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/tasks/{first.pk}/")
    page.go_back()
    page.wait_for_selector("#id_q")
    page.keyboard.press("/")
    assert page.evaluate("() => document.activeElement.id") == "id_q"
    page.keyboard.type("c")  # typed into the search box: not the new-task key
    assert page.evaluate("() => document.activeElement.id") == "id_q"
    page.locator("h1").click()
    page.keyboard.press("c")
    page.wait_for_function("() => document.activeElement.id === 'new-title'")


def test_the_palette_goes_to_a_page_or_a_task(open_board, ws_a):
    (task,) = _seed(ws_a, 1, Column.TODO)
    page = open_board(f"/w/{ws_a.slug}/board/")
    page.keyboard.press("Control+k")
    page.wait_for_selector("#palette[open]")
    page.keyboard.type("trash")
    assert page.locator("#palette-list [role=option]").all_inner_texts() == ["Go to Trash"]
    page.keyboard.press("Escape")
    page.keyboard.press("Control+k")
    page.keyboard.type("card 000")
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/tasks/{task.pk}/")


def test_select_all_in_the_list_moves_every_ticked_task(open_board, ws_a):
    _seed(ws_a, 5)
    page = open_board(f"/w/{ws_a.slug}/board/?view=list")
    page.get_by_label("Select all tasks").check()
    assert page.locator("[data-bulk-count]").inner_text() == "5 tasks ticked."
    page.select_option("#bulk-column", "todo")
    page.locator("#bulk-form").get_by_role("button", name="Move", exact=True).click()
    page.get_by_text("Moved 5 tasks to Todo.").wait_for()
    assert Task.objects.filter(workspace=ws_a, column=Column.TODO).count() == 5


def test_a_cards_menu_opens_with_its_column_chosen_and_moves_or_trashes(open_board, alice, ws_a, agent):
    held = services.task_create(workspace=ws_a, title="Being worked on", by_user=alice).task
    services.task_claim(task_id=held.pk, connection=agent)
    (free,) = [t for t in _seed(ws_a, 1) if t.pk != held.pk]
    page = open_board(f"/w/{ws_a.slug}/board/")
    page.get_by_label(f"Actions for #{held.pk}").click()
    chosen = page.locator(f"#move-{held.pk} option:checked")
    assert chosen.inner_text() == "Doing" and chosen.is_disabled()
    page.get_by_label(f"Actions for #{free.pk}").click()
    # The menu is filled on its toggle event, after the click: focus then moves into its panel.
    in_panel = f"() => document.activeElement.closest('#task-card-{free.pk} .card-menu__panel') !== null"
    page.wait_for_function(in_panel)
    assert page.get_by_role("button", name=f"Start #{free.pk} yourself").is_visible()
    assert page.locator(f"#move-{free.pk}").input_value() == "backlog"
    page.get_by_role("button", name=f"Trash #{free.pk}").click()
    page.get_by_text(f"Moved #{free.pk}").wait_for()
    assert Task.objects.get(pk=free.pk).column == Column.TRASH
