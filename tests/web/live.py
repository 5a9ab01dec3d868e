"""The live server the browser tests share: Weft under uvicorn in a thread, Debian's Chromium.

The server runs in a thread of this process on a free port, against the test database: on
SQLite a file (threads of one process cannot share an in-memory database safely), on
PostgreSQL the test database itself. Agents' calls run inside the server's event loop, as they
would in the embedded default, so their pushes travel through the same channel layer. A test
module imports the fixtures it uses (`file_database`, `live`, `browser`).
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
import uvicorn
from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.core.management import call_command
from django.db import connection, connections
from django.test import Client
from playwright.sync_api import sync_playwright

from accounts.models import User
from tests.servers import free_port

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOTS = Path(settings.BASE_DIR) / "artifacts" / "screenshots"

T = TypeVar("T")


@pytest.fixture(scope="module")
def file_database(django_db_setup: None, django_db_blocker: Any, tmp_path_factory: Any) -> Iterator[None]:
    """On SQLite, move the test database to a file the server's threads can open too."""
    if connection.vendor != "sqlite":
        yield
        return
    path = tmp_path_factory.mktemp("browser-db") / "weft.sqlite3"
    with django_db_blocker.unblock():
        memory = connection.settings_dict["NAME"]
        # The in-memory connection cannot be closed without losing its database: set it aside.
        kept = connection.connection
        connection.connection = None
        connection.settings_dict["NAME"] = str(path)
        call_command("migrate", verbosity=0)
        try:
            yield
        finally:
            connections.close_all()
            connection.settings_dict["NAME"] = memory
            connection.connection = kept


class LiveServer:
    """Weft's ASGI application under uvicorn in a thread, with its event loop at hand."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        from weft.asgi import application

        # Static files from the app folders, as `runserver` would serve them (no collectstatic in tests).
        config = uvicorn.Config(
            ASGIStaticFilesHandler(application),  # type: ignore[arg-type]  # any ASGI app works
            host="127.0.0.1",
            port=self.port,
            lifespan="on",
            log_level="warning",
        )
        self.server = uvicorn.Server(config)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._run, name="weft-uvicorn", daemon=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self.server.serve())

    def start(self) -> None:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.05)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)

    def call(self, fn: Callable[..., T], /, **kwargs: Any) -> T:
        """Run a service as an agent's call would: in a worker thread of the server's loop."""

        def work() -> T:
            try:
                return fn(**kwargs)
            finally:
                connections.close_all()

        future = asyncio.run_coroutine_threadsafe(sync_to_async(work, thread_sensitive=False)(), self.loop)
        return future.result(timeout=15)


@pytest.fixture(scope="module")
def live(file_database: None) -> Iterator[LiveServer]:
    server = LiveServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:

    # Playwright's sync API keeps an event loop in this thread; the ORM calls the tests make
    # between browser steps are still plain synchronous calls.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        yield chromium
        chromium.close()
    if previous is None:
        os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    else:
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


class Person:
    """Opens signed-in pages for one user (the session cookie comes from a real login)."""

    def __init__(self, browser: Any, live: LiveServer, user: User) -> None:
        client = Client()
        client.force_login(user)
        self.context = browser.new_context(base_url=live.url, viewport={"width": 1360, "height": 900})
        self.context.set_default_timeout(8000)
        self.context.add_cookies(
            [
                {
                    "name": settings.SESSION_COOKIE_NAME,
                    "value": client.cookies[settings.SESSION_COOKIE_NAME].value,
                    "url": live.url,
                }
            ]
        )

    def open(self, path: str) -> Any:
        page = self.context.new_page()
        page.goto(path)
        page.wait_for_selector('#weft-live[data-state="live"]')
        return page
