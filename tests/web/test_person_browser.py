"""In Chromium: a person starts, moves and finishes a task from the board's card menu, and the
card says who holds it (tests/web/test_person_lease.py checks the same without a browser)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from accounts.models import User, Workspace
from boards import services
from boards.models import Column, Run, RunState, Task
from tests.web.live import CHROMIUM, LiveServer, Person, browser, file_database, live

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's Chromium at /usr/bin/chromium"),
    pytest.mark.django_db(transaction=True),
]

__all__ = ["browser", "file_database", "live"]  # fixtures: pytest finds them in this module


@pytest.fixture
def page_of_alice(browser: Any, live: LiveServer, alice: User) -> Iterator[Any]:
    person = Person(browser, live, alice)
    yield person
    person.context.close()


def _column_of(task: Task, column: str) -> None:
    deadline = time.monotonic() + 3
    while Task.objects.get(pk=task.pk).column != column and time.monotonic() < deadline:
        time.sleep(0.05)
    assert Task.objects.get(pk=task.pk).column == column


def test_a_person_starts_moves_and_finishes_a_task_from_the_board(page_of_alice, alice, ws_a: Workspace):
    task = services.task_create(workspace=ws_a, title="Draft the launch post", by_user=alice).task
    page = page_of_alice.open(f"/w/{ws_a.slug}/board/")
    card = f"#task-card-{task.pk}"

    page.get_by_label(f"Actions for #{task.pk}").click()
    page.locator(card).get_by_role("button", name="Start", exact=False).click()
    page.locator(f'[data-column="doing"] {card}').wait_for()
    _column_of(task, Column.DOING)
    assert f"Started by {alice.display_name} (you)" in page.locator(card).inner_text()

    # Moved on: back to Todo through the menu's Move to…, which releases the run.
    page.get_by_label(f"Actions for #{task.pk}").click()
    page.select_option(f"#move-{task.pk}", "todo")
    page.locator(card).get_by_role("button", name="Move", exact=True).click()
    page.locator(f'[data-column="todo"] {card}').wait_for()
    _column_of(task, Column.TODO)

    # Started again and finished: Done completes the person's run.
    page.get_by_label(f"Actions for #{task.pk}").click()
    page.locator(card).get_by_role("button", name="Start", exact=False).click()
    page.locator(f'[data-column="doing"] {card}').wait_for()
    page.get_by_label(f"Actions for #{task.pk}").click()
    page.locator(card).get_by_role("button", name="Done", exact=False).click()
    page.locator(f'[data-column="done"] {card}').wait_for()
    _column_of(task, Column.DONE)
    states = sorted(Run.objects.filter(task=task).values_list("state", flat=True))
    assert states == [RunState.COMPLETED, RunState.RELEASED]
    assert "Started by" not in page.locator(card).inner_text()
