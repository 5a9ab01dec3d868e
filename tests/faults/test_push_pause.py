"""A frozen channel layer costs one write the push timeout, then pushes pause: later writes are not slowed.

Found by the redis_freeze fault scenario (bench/faults): with Redis stopped, every write waited
the push timeout and claims fell from about 10 to 2 a second.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from boards import push
from boards.services import task_create

pytestmark = pytest.mark.django_db
TIMEOUT = 0.3


@pytest.fixture
def silent_layer(settings) -> Iterator[None]:  # type: ignore[no-untyped-def]
    """The channel layer on a loopback socket that accepts and never answers, as a frozen Redis does."""
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
    url = f"redis://127.0.0.1:{server.getsockname()[1]}/0"
    settings.CHANNEL_LAYERS = {
        "default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": [url]}}
    }
    settings.WEFT_PUSH_TIMEOUT_SECONDS = TIMEOUT
    try:
        yield
    finally:
        stop.set()
        thread.join(2)
        for conn in accepted:
            conn.close()
        server.close()


def _write(alice, ws_a, capture) -> float:  # type: ignore[no-untyped-def]
    started = time.monotonic()
    with capture(execute=True) as callbacks:
        task_create(workspace=ws_a, title="Written while the channel layer is silent", by_user=alice)
    assert callbacks, "the write scheduled no push"
    return time.monotonic() - started


def test_it_pauses_pushes_after_a_timeout_so_later_writes_are_not_slowed(
    silent_layer, alice, ws_a, django_capture_on_commit_callbacks
):
    first = _write(alice, ws_a, django_capture_on_commit_callbacks)
    later = [_write(alice, ws_a, django_capture_on_commit_callbacks) for _ in range(3)]
    assert first >= TIMEOUT, f"the first write did not wait for the layer ({first:.2f}s)"
    assert max(later) < TIMEOUT / 2, f"later writes still waited: {[round(t, 2) for t in later]}"


def test_it_tries_the_layer_again_when_the_pause_is_over(
    silent_layer, alice, ws_a, django_capture_on_commit_callbacks, monkeypatch
):
    monkeypatch.setattr(push, "PAUSE_SECONDS", 0.0)
    _write(alice, ws_a, django_capture_on_commit_callbacks)
    again = _write(alice, ws_a, django_capture_on_commit_callbacks)
    assert again >= TIMEOUT, f"the layer was not tried again after the pause ({again:.2f}s)"
