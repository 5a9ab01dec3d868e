"""The header fits on one row and no page scrolls sideways, from a 360 px phone to 1600 px.

Measured in Debian's Chromium on the board, Inbox, task, connect and agents pages, signed in
with a long email and a long workspace name, with items waiting so the Inbox count shows.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.test import Client

from accounts.models import AgentConnection, User, Workspace
from accounts.services import workspace_create
from tests.conftest import _person
from tests.web.test_browser import CHROMIUM, browser, file_database, live, review, shot  # noqa: F401

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's Chromium at /usr/bin/chromium"),
    pytest.mark.django_db(transaction=True),
]

WIDTHS = (360, 390, 1024, 1280, 1600)
# One row of the header: its 56 px minimum and a little room for the border and rounding.
ONE_ROW = 64

MEASURE = """() => {
  const header = document.querySelector("header.topbar").getBoundingClientRect();
  return {
    header: header.height,
    scroll: document.documentElement.scrollWidth,
    inner: window.innerWidth,
  };
}"""


@pytest.fixture
def dana(db: Any) -> User:
    return _person("dana.longname-for-the-header@example.com")


@pytest.fixture
def ws_long(dana: User) -> Workspace:
    return workspace_create(owner=dana, name="Platform engineering and release tooling")


def _pages(server: Any, ws: Workspace, dana: User) -> list[str]:
    agent = AgentConnection.objects.create(workspace=ws, user=dana, name="Claude Code")
    task = review(server, ws, agent, title="Ship the release notes", next_step="Tag release 1.4")
    return [
        f"/w/{ws.slug}/board/",
        f"/w/{ws.slug}/inbox/",
        f"/w/{ws.slug}/tasks/{task.pk}/",
        "/connect/",
        "/agents/",
    ]


def _signed_in(chromium: Any, server: Any, user: User, width: int) -> Any:
    client = Client()
    client.force_login(user)
    context = chromium.new_context(base_url=server.url, viewport={"width": width, "height": 800})
    context.set_default_timeout(8000)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
    context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": cookie, "url": server.url}])
    return context


def test_it_fits_the_header_on_one_row_without_sideways_scrolling(browser, live, dana, ws_long):  # noqa: F811
    paths = _pages(live, ws_long, dana)
    problems = []
    for width in WIDTHS:
        context = _signed_in(browser, live, dana, width)
        page = context.new_page()
        for path in paths:
            page.goto(path)
            assert page.locator("[data-testid=inbox-count]").first.is_visible(), (width, path)
            got = page.evaluate(MEASURE)
            if got["header"] > ONE_ROW or got["scroll"] > got["inner"]:
                problems.append((width, path, got))
        context.close()
    assert problems == [], problems


def test_it_opens_the_menu_and_the_attention_panel_on_a_phone(browser, live, dana, ws_long):  # noqa: F811
    _pages(live, ws_long, dana)
    context = _signed_in(browser, live, dana, 360)
    page = context.new_page()
    page.goto(f"/w/{ws_long.slug}/board/")
    assert not page.locator(".navlinks--wide").is_visible()
    page.click(".navmenu > summary")
    assert page.locator(".navmenu .menu__list >> text=Members").is_visible()
    page.keyboard.press("Escape")
    page.focus(".attention > summary")
    page.keyboard.press("Enter")
    panel = page.locator(".attention__panel")
    assert "1 of 5 items wait on people" in panel.inner_text()
    assert "agents are refused new work until someone decides" in panel.inner_text()
    got = page.evaluate(MEASURE)
    assert got["scroll"] <= got["inner"]
    shot(page, "header-phone-attention")
    context.close()
