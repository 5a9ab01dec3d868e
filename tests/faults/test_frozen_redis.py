"""A frozen Redis slows a write by at most the push timeout; the push is dropped and logged."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import threading
import time
from collections.abc import Iterator

import pytest
from django.conf import settings as django_settings

from boards.services import task_create

pytestmark = pytest.mark.django_db
TIMEOUT = 0.3
MARGIN = 1.0


@contextlib.contextmanager
def _deadline(seconds: int) -> Iterator[None]:
    """Fail instead of hanging when a push blocks without bound (SIGALRM interrupts the wait)."""

    def expired(signum: int, frame: object) -> None:
        raise AssertionError(f"the write still waited after {seconds}s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def frozen_redis(redis_url: str) -> Iterator[str]:
    """The suite's throwaway Redis, stopped with SIGSTOP (its socket accepts, nothing answers)."""
    pid = int(os.environ["WEFT_TEST_REDIS_PID"])  # set by tests.servers beside the Redis URL
    os.kill(pid, signal.SIGSTOP)
    try:
        yield redis_url
    finally:
        os.kill(pid, signal.SIGCONT)


@pytest.fixture
def silent_listener() -> Iterator[str]:
    """A loopback socket that accepts connections and never answers: Redis as a dead proxy shows it."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            with contextlib.suppress(OSError):
                accepted.append(server.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"redis://127.0.0.1:{server.getsockname()[1]}/0"
    finally:
        stop.set()
        thread.join(2)
        for conn in accepted:
            conn.close()
        server.close()


def _timed_write(url: str, alice, ws_a, settings, capture, caplog) -> float:  # type: ignore[no-untyped-def]
    settings.CHANNEL_LAYERS = {
        "default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": [url]}}
    }
    settings.WEFT_PUSH_TIMEOUT_SECONDS = TIMEOUT
    with caplog.at_level(logging.WARNING, logger="boards.push"), _deadline(30):
        started = time.monotonic()
        with capture(execute=True) as callbacks:
            task_create(workspace=ws_a, title="Written while Redis is frozen", by_user=alice)
        elapsed = time.monotonic() - started
    assert callbacks, "the write scheduled no push"
    assert any("dropped" in record.getMessage() for record in caplog.records), caplog.text
    return elapsed


def test_it_bounds_a_write_by_the_push_timeout_with_a_frozen_redis(
    frozen_redis, alice, ws_a, settings, django_capture_on_commit_callbacks, caplog
):
    elapsed = _timed_write(frozen_redis, alice, ws_a, settings, django_capture_on_commit_callbacks, caplog)
    assert elapsed < TIMEOUT + MARGIN, f"the write took {elapsed:.2f}s"


def test_it_bounds_a_write_by_the_push_timeout_with_a_silent_socket(
    silent_listener, alice, ws_a, settings, django_capture_on_commit_callbacks, caplog
):
    elapsed = _timed_write(silent_listener, alice, ws_a, settings, django_capture_on_commit_callbacks, caplog)
    assert elapsed < TIMEOUT + MARGIN, f"the write took {elapsed:.2f}s"


def test_it_defaults_to_a_short_push_timeout():
    assert 0 < django_settings.WEFT_PUSH_TIMEOUT_SECONDS <= 1
