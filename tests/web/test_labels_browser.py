"""In Chromium: a person assigns a task and labels it from the task page, and the board's label
and "Assigned to me" filters apply as they are picked (no Apply button)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from accounts.models import User, Workspace
from boards import services
from tests.web.live import CHROMIUM, LiveServer, Person, browser, file_database, live

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's Chromium at /usr/bin/chromium"),
    pytest.mark.django_db(transaction=True),
]

__all__ = ["browser", "file_database", "live"]  # fixtures: pytest finds them in this module


@pytest.fixture
def person(browser: Any, live: LiveServer, alice: User) -> Iterator[Person]:
    opened = Person(browser, live, alice)
    yield opened
    opened.context.close()


def test_a_person_assigns_and_labels_a_task_and_filters_the_board(person, alice, bob, ws_a: Workspace):
    bob.name = "Bob Stone"
    bob.save(update_fields=["name"])
    task = services.task_create(workspace=ws_a, title="Write the release notes", by_user=alice).task
    services.task_create(workspace=ws_a, title="Water the plants", by_user=alice)
    page = person.open(f"/w/{ws_a.slug}/tasks/{task.pk}/")
    page.select_option("#task-assignee", label="Bob Stone")
    page.click("form[action$='/assignee/'] button")
    page.wait_for_selector("text=Assigned to Bob Stone.")
    page.fill("#label-name", "Release")
    page.select_option("#label-colour", "green")
    page.click("form[action$='/labels/new/'] button")
    page.wait_for_selector("text=Added the label Release.")
    assert page.locator(".task-head__meta .label-chip--green").inner_text() == "Release"

    board = person.open(f"/w/{ws_a.slug}/board/")
    card = board.locator(f"#task-card-{task.pk}")
    assert "Bob Stone" in card.inner_text() and "bob@example.com" not in card.inner_text()
    board.select_option("#id_label", "Release")
    board.wait_for_function("() => !document.body.innerText.includes('Water the plants')")
    assert "label=Release" in board.url
    assert board.locator(f"#task-card-{task.pk}").is_visible()
    board.check("input[name=mine]")
    board.wait_for_function(f"() => !document.getElementById('task-card-{task.pk}')")
    assert "mine=on" in board.url
