"""Fixtures for webhooks: a local receiver, a movable clock, and events handed to the relay hook.

`Receiver` is a real HTTP server on 127.0.0.1 in a thread; what it answers is set per test
(a status per request, a delay). Loopback is a private address, so tests that send to it run
with settings.DEBUG on, which is when Weft allows loopback receivers.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from hooks.models import Delivery
from weft import events


@dataclass
class Received:
    headers: dict[str, str]
    body: str

    @property
    def json(self) -> dict[str, Any]:
        return json.loads(self.body)


@dataclass
class Receiver:
    """What the test's endpoint got, and how it answers: `statuses` in turn (the last repeats)."""

    url: str = ""
    statuses: list[int] = field(default_factory=lambda: [200])
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    received: list[Received] = field(default_factory=list)

    def answer(self) -> int:
        return self.statuses.pop(0) if len(self.statuses) > 1 else self.statuses[0]


@contextmanager
def serve(state: Receiver) -> Iterator[Receiver]:
    """Serve `state` on a free loopback port until the block ends."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length).decode()
            state.received.append(Received({k.lower(): v for k, v in self.headers.items()}, body))
            if state.delay:
                time.sleep(state.delay)
            self.send_response(state.answer())
            for name, value in state.headers.items():
                self.send_header(name, value)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.block_on_close = False
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with serve(Receiver()) as state:
        yield state


@pytest.fixture
def receivers() -> Iterator[Callable[[], Receiver]]:
    """More receivers, each on its own port, made on demand."""
    with ExitStack() as stack:
        yield lambda: stack.enter_context(serve(Receiver()))


@pytest.fixture(autouse=True)
def _clock_follows_time_machine(moved_clock: None) -> None:
    """The database clock follows time-machine on every database (PostgreSQL's does not)."""


class Relay:
    """Runs the log's relay (as the writer's commit or the periodic backstop would) and names the
    deliveries its hook made since the last call."""

    def __init__(self) -> None:
        self.mark = 0
        self.skip()

    def skip(self) -> None:
        """Relay what is waiting and forget its deliveries (events from before the test's point)."""
        self()

    def __call__(self) -> list[int]:
        events.relay()
        made = list(Delivery.objects.filter(pk__gt=self.mark).order_by("pk").values_list("pk", flat=True))
        self.mark = made[-1] if made else self.mark
        return made


@pytest.fixture
def relay(db: None) -> Relay:
    return Relay()


def fake_dns(
    monkeypatch: pytest.MonkeyPatch, table: dict[str, str], default: str | None = "93.184.216.34"
) -> None:
    """socket.getaddrinfo answers from `table` (else `default`, else no such host)."""
    import socket

    def getaddrinfo(host: str, port: int, *args: Any, **kwargs: Any) -> list[tuple[Any, ...]]:
        ip = table.get(host, default)
        if ip is None:
            raise socket.gaierror(f"no such host {host}")
        family = socket.AF_INET6 if ":" in ip else socket.AF_INET
        return [(family, socket.SOCK_STREAM, 6, "", (ip, port))]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


@pytest.fixture
def public_dns(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every host name resolves to one public address (no network is asked)."""
    fake_dns(monkeypatch, {})
