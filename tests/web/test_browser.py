"""Browser tests: Playwright drives Debian's Chromium against Weft under uvicorn (with web sockets).

The live server, the test database it shares and the browser are tests/web/live.py's.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from accounts.models import AgentConnection, User, Workspace
from boards import services
from boards.models import Column, InboxItem, InboxState, Question, QuestionState, Task
from tests.conftest import PASSWORD
from tests.web.live import CHROMIUM, SCREENSHOTS, LiveServer, Person, browser, file_database, live

LIVE_TIMEOUT_MS = 2000

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's Chromium at /usr/bin/chromium"),
    pytest.mark.django_db(transaction=True),
]

__all__ = ["browser", "file_database", "live"]  # fixtures: pytest finds them in this module


@pytest.fixture
def people(browser: Any, live: LiveServer) -> Iterator[Callable[[User], Person]]:
    opened: list[Person] = []

    def person(user: User) -> Person:
        opened.append(Person(browser, live, user))
        return opened[-1]

    yield person
    for p in opened:
        p.context.close()


@pytest.fixture
def agent(alice: User, ws_a: Workspace) -> AgentConnection:
    return AgentConnection.objects.create(workspace=ws_a, user=alice, name="Claude Code")


def review(
    live: LiveServer, ws: Workspace, connection: AgentConnection, *, title: str, next_step: str = ""
) -> Task:
    """An agent claims a review_required task and completes it: the report waits in the Inbox."""
    task = services.task_create(workspace=ws, title=title, review_required=True).task
    claim = live.call(services.task_claim, task_id=task.pk, connection=connection)
    live.call(
        services.run_heartbeat,
        workspace=ws,
        run_id=claim.run.run_id,
        lease_token=claim.lease_token,
        note="Wrote the draft; checking links",
    )
    live.call(
        services.run_complete,
        workspace=ws,
        run_id=claim.run.run_id,
        lease_token=claim.lease_token,
        outcome="The changelog for 1.4 is written and linked from the README.",
        artifacts=[
            {"kind": "pr", "uri": "https://github.com/acme/app/pull/42"},
            {"kind": "commit", "uri": "3f9c2a1"},
        ],
        claims=["All merged PRs since 1.3 are listed"],
        not_done=["Screenshots are not updated"],
        unknowns=["Whether 1.4 ships this week"],
        next_step=next_step,
    )
    return task


def ask(live: LiveServer, ws: Workspace, connection: AgentConnection, *, title: str) -> Task:
    task = services.task_create(workspace=ws, title=title).task
    claim = live.call(services.task_claim, task_id=task.pk, connection=connection)
    live.call(
        services.run_request_input,
        workspace=ws,
        run_id=claim.run.run_id,
        lease_token=claim.lease_token,
        question="Which database should the demo use?",
        options=["PostgreSQL", "SQLite"],
    )
    return task


def shot(page: Any, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def item_of(task: Task) -> InboxItem:
    return InboxItem.objects.filter(task=task).latest("created_at")


def test_it_signs_in_and_shows_the_board(browser, live, alice, ws_a, agent):
    services.task_create(workspace=ws_a, title="Plan the 1.4 release", priority=2, by_user=alice)
    held = services.task_create(workspace=ws_a, title="Update the API docs", review_required=True).task
    claim = live.call(services.task_claim, task_id=held.pk, connection=agent)
    live.call(
        services.run_heartbeat,
        workspace=ws_a,
        run_id=claim.run.run_id,
        lease_token=claim.lease_token,
        note="Half of the endpoints done",
    )
    services.task_create(workspace=ws_a, title="Collect feedback", column="backlog", by_user=alice)
    context = browser.new_context(base_url=live.url, viewport={"width": 1360, "height": 900})
    page = context.new_page()
    page.goto("/accounts/login/")
    page.fill("input[name=login]", alice.email)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.goto(f"/w/{ws_a.slug}/board/")
    page.wait_for_selector('#weft-live[data-state="live"]')
    for column in ("Backlog", "Todo", "Doing", "Done"):
        assert page.locator(f"#col-{column.lower()}-title").is_visible()
    doing = page.locator('[data-column="doing"]')
    assert "Update the API docs" in doing.inner_text()
    assert "Claude Code" in doing.inner_text()
    assert "lease" in doing.inner_text() and "beat" in doing.inner_text()
    shot(page, "board")
    page.click(f"#task-card-{held.pk} .task-card__title")
    page.wait_for_selector("text=Run timeline")
    assert "Half of the endpoints done" in page.inner_text("main")
    context.close()


def test_it_shows_a_completed_review_live_and_moves_the_card_in_another_page(
    people, live, alice, ws_a, agent
):
    person = people(alice)
    inbox = person.open(f"/w/{ws_a.slug}/inbox/")
    board = person.open(f"/w/{ws_a.slug}/board/")
    assert inbox.locator("[data-testid=inbox-count]").inner_text() == "0"

    task = review(
        live, ws_a, agent, title="Write the changelog", next_step="Tag release 1.4 and push the tag"
    )
    item = inbox.locator(".inbox-item").first
    item.wait_for(timeout=LIVE_TIMEOUT_MS)
    assert "Write the changelog" in item.inner_text()
    assert "If you accept, the agent will:" in item.inner_text()
    assert inbox.locator("[data-testid=inbox-count]").inner_text() == "1"
    board.locator(f'[data-column="doing"] #task-card-{task.pk}').wait_for(timeout=LIVE_TIMEOUT_MS)
    shot(inbox, "inbox")
    task_page = person.open(f"/w/{ws_a.slug}/tasks/{task.pk}/")
    shot(task_page, "task")
    assert "Screenshots are not updated" in task_page.inner_text("main")
    assert task_page.locator('a[href="https://github.com/acme/app/pull/42"]').count() == 1

    item.get_by_role("button", name="Accept").click()
    inbox.locator(".message--success").wait_for()
    assert inbox.locator(".inbox-item").count() == 0
    board.locator(f'[data-column="done"] #task-card-{task.pk}').wait_for(timeout=LIVE_TIMEOUT_MS)
    assert Task.objects.get(pk=task.pk).column == Column.DONE


def test_it_sends_a_review_back_for_rework(people, live, alice, ws_a, agent):
    task = review(live, ws_a, agent, title="Fix the login page")
    page = people(alice).open(f"/w/{ws_a.slug}/inbox/")
    item = page.locator(".inbox-item").first
    item.focus()
    page.keyboard.press("r")
    note = item.get_by_label("What should change?")
    assert note.evaluate("el => el === document.activeElement")
    note.fill("The error message is still missing")
    item.get_by_role("button", name="Send back for rework").click()
    page.locator(".message--success").wait_for()
    decided = item_of(task)
    assert (decided.decision, decided.note) == ("rework", "The error message is still missing")
    assert Task.objects.get(pk=task.pk).column == Column.TODO


def test_it_snoozes_a_review_for_later(people, live, alice, ws_a, agent):
    task = review(live, ws_a, agent, title="Review the invoice export")
    page = people(alice).open(f"/w/{ws_a.slug}/inbox/")
    item = page.locator(".inbox-item").first
    item.get_by_text("Later…").click()
    item.get_by_role("button", name="4 h").click()
    page.locator(".message--success").wait_for()
    assert item_of(task).state == InboxState.SNOOZED
    page.locator("details.snoozed").wait_for()
    assert page.locator("[data-testid=inbox-count]").inner_text() == "0"


def test_it_drops_a_review_after_confirmation(people, live, alice, ws_a, agent):
    task = review(live, ws_a, agent, title="Rewrite the importer")
    page = people(alice).open(f"/w/{ws_a.slug}/inbox/")
    item = page.locator(".inbox-item").first
    item.focus()
    page.keyboard.press("d")
    confirm = item.get_by_role("button", name="Yes, drop it")
    assert confirm.evaluate("el => el === document.activeElement")
    confirm.click()
    page.locator(".message--success").wait_for()
    assert Task.objects.get(pk=task.pk).column == Column.DROPPED


def test_it_answers_a_question_with_an_option_and_with_text(people, live, alice, ws_a, agent):
    first = ask(live, ws_a, agent, title="Set up the demo")
    page = people(alice).open(f"/w/{ws_a.slug}/inbox/")
    page.locator(".inbox-item--question").first.get_by_role("button", name="PostgreSQL").click()
    page.locator(".message--success").wait_for()
    assert Question.objects.get(task=first).answer == "PostgreSQL"

    other = services.task_create(workspace=ws_a, title="Second demo").task
    claim = live.call(services.task_claim, task_id=other.pk, connection=agent)
    live.call(
        services.run_request_input,
        workspace=ws_a,
        run_id=claim.run.run_id,
        lease_token=claim.lease_token,
        question="What should the demo be called?",
    )
    item = page.locator(".inbox-item--question").first
    item.wait_for(timeout=LIVE_TIMEOUT_MS)
    item.get_by_label("Your answer").fill("Weft tour")
    item.get_by_role("button", name="Send answer").click()
    expect(page.locator(".message--success")).to_have_count(2)
    assert Question.objects.get(task=other).answer == "Weft tour"


def test_it_drops_a_question_after_confirmation(people, live, alice, ws_a, agent):
    task = ask(live, ws_a, agent, title="Pick the demo database")
    page = people(alice).open(f"/w/{ws_a.slug}/inbox/")
    item = page.locator(".inbox-item--question").first
    expect(item.get_by_text("Later…")).to_be_visible()
    shot(page, "inbox-question")
    item.focus()
    page.keyboard.press("d")
    confirm = item.get_by_role("button", name="Yes, drop it")
    assert confirm.evaluate("el => el === document.activeElement")
    assert "Drop this question on" in item.inner_text()
    confirm.click()
    notice = page.locator(".message--success")
    notice.wait_for()
    assert "Question dropped" in notice.inner_text()
    assert page.locator(".inbox-item").count() == 0
    expect(page.locator("[data-testid=inbox-count]")).to_have_text("0", timeout=LIVE_TIMEOUT_MS)
    assert Question.objects.get(task=task).state == QuestionState.CANCELLED
    assert Task.objects.get(pk=task.pk).column == Column.DOING
    work = live.call(services.work_for_connection, connection=agent)
    assert work.waiting == []
    assert all(not questions for questions in work.open_questions.values())


def test_it_tells_the_second_tab_the_item_is_already_decided(people, live, alice, bob, ws_a, agent):
    task = review(live, ws_a, agent, title="Approve the pricing page")
    first = people(alice).open(f"/w/{ws_a.slug}/inbox/")
    second = people(bob).open(f"/w/{ws_a.slug}/inbox/")
    # Bob is halfway through a rework note when Alice accepts in her tab.
    bob_item = second.locator(".inbox-item").first
    bob_item.get_by_text("Rework…").click()
    bob_item.get_by_label("What should change?").fill("Make the yearly price clearer")
    first.locator(".inbox-item").first.get_by_role("button", name="Accept").click()
    first.locator(".message--success").wait_for()
    second.wait_for_timeout(300)
    bob_item.get_by_role("button", name="Send back for rework").click()
    error = second.locator(".message--error")
    error.wait_for()
    assert "Already decided — nothing changed." in error.inner_text()
    decided = item_of(task)
    assert (decided.decision, decided.decided_by) == ("accept", alice)
    assert Task.objects.get(pk=task.pk).column == Column.DONE


def test_it_moves_a_card_with_the_keyboard_and_by_dragging(people, live, alice, ws_a):
    task = services.task_create(
        workspace=ws_a, title="Sort the backlog", column="backlog", by_user=alice
    ).task
    page = people(alice).open(f"/w/{ws_a.slug}/board/")
    page.get_by_label(f"Actions for #{task.pk}").click()
    page.select_option(f"#move-{task.pk}", "todo")
    page.locator(f"#task-card-{task.pk}").get_by_role("button", name="Move", exact=True).click()
    page.locator(f'[data-column="todo"] #task-card-{task.pk}').wait_for()
    assert Task.objects.get(pk=task.pk).column == Column.TODO
    page.drag_and_drop(f"#task-card-{task.pk}", '[data-drop="done"]')
    page.locator(f'[data-column="done"] #task-card-{task.pk}').wait_for()
    deadline = time.monotonic() + 3
    while Task.objects.get(pk=task.pk).column != Column.DONE and time.monotonic() < deadline:
        time.sleep(0.05)
    assert Task.objects.get(pk=task.pk).column == Column.DONE


def test_it_refetches_the_inbox_after_a_reconnect(people, live, alice, ws_a, agent):
    page = people(alice).open(f"/w/{ws_a.slug}/inbox/")
    page.evaluate("window.weftLive.pause()")
    page.wait_for_selector('#weft-live[data-state="offline"]')
    review(live, ws_a, agent, title="Missed while offline")
    assert page.locator(".inbox-item").count() == 0
    page.evaluate("window.weftLive.resume()")
    page.locator(".inbox-item").first.wait_for(timeout=LIVE_TIMEOUT_MS)
    assert "Missed while offline" in page.locator(".inbox-item").first.inner_text()
