"""The relay's fan-out to the channel layer never holds the request that committed the event.

A sync tool or view runs in asgiref's thread pool; its commit's push is handed to the server's
event loop, and the thread goes on while the loop waits for the channel layer.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from asgiref.sync import sync_to_async

from boards import push
from weft.models import Event

SLOW = 1.0


class SlowLayer:
    """A channel layer that takes SLOW seconds to accept each group send."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        await asyncio.sleep(SLOW)
        self.sent.append((group, message))


def _event(position: int) -> Event:
    return Event(workspace_id=5, position=position, type="task.created", entity_type="task", entity_id="9")


async def test_a_push_committed_in_a_request_thread_is_sent_without_the_request_waiting(
    monkeypatch, settings
):
    layer = SlowLayer()
    monkeypatch.setattr(push, "get_channel_layer", lambda: layer)
    settings.WEFT_PUSH_TIMEOUT_SECONDS = SLOW * 5
    started = time.monotonic()
    await sync_to_async(push.push_event)(_event(7))
    took = time.monotonic() - started
    assert took < SLOW / 2, f"the request's thread waited {took:.2f}s for the channel layer"
    assert layer.sent == []
    deadline = time.monotonic() + SLOW * 5
    while not layer.sent and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert layer.sent == [(push.workspace_group(5), push.event_message(_event(7)))]


async def test_a_push_from_a_request_thread_still_drops_a_send_the_layer_does_not_take_in_time(
    monkeypatch, settings
):
    layer = SlowLayer()
    monkeypatch.setattr(push, "get_channel_layer", lambda: layer)
    monkeypatch.setattr(push, "_paused_until", type(push._paused_until)())
    settings.WEFT_PUSH_TIMEOUT_SECONDS = SLOW / 4
    await sync_to_async(push.push_event)(_event(8))
    await asyncio.sleep(SLOW * 1.5)
    assert layer.sent == []  # given up after the timeout, on the loop
    assert push._paused_until.get(layer, 0.0) > time.monotonic()  # and later pushes pause


class CountingLayer:
    """A channel layer that records the order of its sends and how many ran at once."""

    def __init__(self) -> None:
        self.positions: list[int] = []
        self.sends = self.running = self.most = 0

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        self.running += 1
        self.sends += 1
        self.most = max(self.most, self.running)
        await asyncio.sleep(0.01)
        self.positions.extend(one["position"] for one in push.unbatched(message))
        self.running -= 1


async def test_a_burst_of_pushes_is_sent_one_at_a_time_in_position_order(monkeypatch):
    layer = CountingLayer()
    monkeypatch.setattr(push, "get_channel_layer", lambda: layer)

    def fan_out_batch() -> None:  # one relay batch fanned out in a request's thread
        for position in range(1, 21):
            push.push_event(_event(position))

    await sync_to_async(fan_out_batch)()
    push.push_event(_event(21))  # and one committed on the loop's own thread
    deadline = time.monotonic() + 5
    while len(layer.positions) < 21 and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert layer.positions == list(range(1, 22))
    assert layer.most == 1, f"{layer.most} sends ran at once: one channel-layer connection each"
    # The batch's pushes waiting in a row went together: far fewer sends than events.
    assert layer.sends < 21 / 2, f"{layer.sends} sends for 21 events"


async def test_pushes_to_two_workspaces_keep_their_order_and_their_workspace(monkeypatch):
    layer = CountingLayer()
    groups: list[str] = []
    real_send = layer.group_send

    async def recording(group: str, message: dict[str, Any]) -> None:
        groups.extend([group] * len(push.unbatched(message)))
        await real_send(group, message)

    monkeypatch.setattr(layer, "group_send", recording)
    monkeypatch.setattr(push, "get_channel_layer", lambda: layer)
    events = [_event(1), _event(2), Event(workspace_id=6, position=3, type="task.created", entity_type="task",
              entity_id="1"), _event(4)]  # fmt: skip

    def fan_out_batch() -> None:
        for event in events:
            push.push_event(event)

    await sync_to_async(fan_out_batch)()
    deadline = time.monotonic() + 5
    while len(layer.positions) < 4 and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert layer.positions == [1, 2, 3, 4]
    assert groups == [push.workspace_group(w) for w in (5, 5, 6, 5)]
