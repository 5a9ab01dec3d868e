"""The process's fan-out (boards/fanout.py): one channel per event loop hears each workspace once and
writes each message to that workspace's sockets, and to no other."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from channels.layers import InMemoryChannelLayer

from boards import fanout
from boards.fanout import Fanout
from boards.push import MESSAGE_TYPE, batched, workspace_group

A, B = 1, 2


class Page:
    """A socket as the fan-out sees it: the frames written to it, and whether it was closed."""

    def __init__(self) -> None:
        self.frames: list[dict[str, Any]] = []
        self.closed = False

    async def send_frame(self, text: str) -> None:
        self.frames.append(json.loads(text))

    async def close_for_layer(self) -> None:
        self.closed = True


class StuckPage(Page):
    """A socket whose write waits until released, as a server that awaits a slow client would."""

    def __init__(self) -> None:
        super().__init__()
        self.release = asyncio.Event()

    async def send_frame(self, text: str) -> None:
        await self.release.wait()
        await super().send_frame(text)


class FailingLayer(InMemoryChannelLayer):
    """An in-memory layer whose receive fails once `broken` is set, as a lost Redis does."""

    def __init__(self) -> None:
        super().__init__()
        self.broken = asyncio.Event()

    async def receive(self, channel: str) -> dict[str, Any]:
        received = asyncio.ensure_future(super().receive(channel))
        broken = asyncio.ensure_future(self.broken.wait())
        await asyncio.wait([received, broken], return_when=asyncio.FIRST_COMPLETED)
        if not received.done():
            received.cancel()
            raise ConnectionError("the channel layer went away")
        broken.cancel()
        return received.result()


class CountingLayer(InMemoryChannelLayer):
    def __init__(self) -> None:
        super().__init__()
        self.adds: list[str] = []

    async def group_add(self, group: str, channel: str) -> None:
        self.adds.append(group)
        await super().group_add(group, channel)


def _message(workspace: int, position: int) -> dict[str, Any]:
    return {
        "type": MESSAGE_TYPE,
        "workspace": workspace,
        "position": position,
        "event": "task.created",
        "entity_type": "task",
        "entity_id": str(position),
    }


async def _settle(pages: list[Page], count: int) -> None:
    for _ in range(200):
        if all(len(page.frames) >= count for page in pages):
            return
        await asyncio.sleep(0.01)


async def test_it_hears_each_workspace_on_one_channel_however_many_sockets_it_has():
    layer = InMemoryChannelLayer()
    hub = Fanout(layer)
    ours, theirs = [Page(), Page(), Page()], Page()
    for page in ours:
        await hub.join(A, page)
    await hub.join(B, theirs)
    assert list(layer.groups[workspace_group(A)]) == [hub.channel]
    assert list(layer.groups[workspace_group(B)]) == [hub.channel]
    await layer.group_send(workspace_group(A), _message(A, 7))
    await _settle(ours, 1)
    assert [page.frames for page in ours] == [
        [{"type": "event", "position": 7, "event": "task.created", "entity_type": "task", "entity_id": "7"}]
    ] * 3
    assert theirs.frames == []
    for page in ours:
        await hub.leave(A, page)
    await hub.leave(B, theirs)


async def test_it_writes_a_message_only_to_the_sockets_of_the_workspace_it_names():
    hub = Fanout(InMemoryChannelLayer())
    ours, theirs = Page(), Page()
    await hub.join(A, ours)
    await hub.join(B, theirs)
    hub.deliver(_message(B, 3))
    hub.deliver(_message(99, 4))  # a workspace with no socket in this process
    hub.deliver({**_message(A, 5), "type": "other.kind"})
    await asyncio.sleep(0)
    assert ours.frames == []
    assert [frame["position"] for frame in theirs.frames] == [3]
    await hub.leave(A, ours)
    await hub.leave(B, theirs)


async def test_a_batch_of_pushes_reaches_its_workspace_as_one_frame_per_event_in_order():
    hub = Fanout(InMemoryChannelLayer())
    ours, theirs = Page(), Page()
    await hub.join(A, ours)
    await hub.join(B, theirs)
    hub.deliver(batched([_message(A, 3), _message(A, 4), _message(A, 6)]))
    await asyncio.sleep(0)
    assert ours.frames == [
        {"type": "event", "position": p, "event": "task.created", "entity_type": "task", "entity_id": str(p)}
        for p in (3, 4, 6)
    ]
    assert theirs.frames == []
    await hub.leave(A, ours)
    await hub.leave(B, theirs)


async def test_a_socket_that_cannot_take_a_frame_holds_no_other_socket_up():
    hub = Fanout(InMemoryChannelLayer())
    stuck, ready = StuckPage(), Page()
    await hub.join(A, stuck)
    await hub.join(A, ready)
    hub.deliver(_message(A, 1))
    hub.deliver(_message(A, 2))
    # Written before deliver returned: no wait on the loop, none on the stuck socket.
    assert [frame["position"] for frame in ready.frames] == [1, 2]
    assert stuck.frames == []
    stuck.release.set()
    await _settle([stuck], 2)
    assert sorted(frame["position"] for frame in stuck.frames) == [1, 2]
    await hub.leave(A, stuck)
    await hub.leave(A, ready)


async def test_it_leaves_a_group_with_its_last_socket_and_stops_with_the_last_of_all():
    layer = InMemoryChannelLayer()
    hub = Fanout(layer)
    first, second, other = Page(), Page(), Page()
    await hub.join(A, first)
    await hub.join(A, second)
    await hub.join(B, other)
    tasks = list(hub._tasks)
    await hub.leave(A, first)
    assert workspace_group(A) in layer.groups
    await hub.leave(A, second)
    await hub.leave(A, second)  # a second leave is a no-op
    assert workspace_group(A) not in layer.groups
    assert hub.channel is not None
    await hub.leave(B, other)
    assert layer.groups == {}
    assert hub.channel is None and hub.sockets == {}
    await asyncio.sleep(0)
    assert all(task.done() for task in tasks)


async def test_a_failing_channel_layer_closes_the_sockets_so_their_pages_reconnect():
    layer = FailingLayer()
    hub = Fanout(layer)
    pages = [Page(), Page()]
    await hub.join(A, pages[0])
    await hub.join(B, pages[1])
    layer.broken.set()
    for _ in range(100):
        if all(page.closed for page in pages):
            break
        await asyncio.sleep(0.01)
    assert all(page.closed for page in pages)
    assert hub.sockets == {} and hub.channel is None
    # The page that reconnects joins afresh, on a new channel.
    layer.broken.clear()
    again = Page()
    await hub.join(A, again)
    await layer.group_send(workspace_group(A), _message(A, 9))
    await _settle([again], 1)
    assert [frame["position"] for frame in again.frames] == [9]
    await hub.leave(A, again)


async def test_it_renews_its_groups_while_sockets_stay(monkeypatch):
    monkeypatch.setattr(fanout, "RENEW_SECONDS", 0.02)
    layer = CountingLayer()
    hub = Fanout(layer)
    page = Page()
    await hub.join(A, page)
    await asyncio.sleep(0.15)
    assert layer.adds.count(workspace_group(A)) >= 3
    await hub.leave(A, page)


async def test_a_join_the_layer_refuses_leaves_nothing_running():
    class Refusing(InMemoryChannelLayer):
        async def group_add(self, group: str, channel: str) -> None:
            raise ConnectionError("no Redis")

    hub = Fanout(Refusing())
    with pytest.raises(ConnectionError):
        await hub.join(A, Page())
    assert hub.sockets == {} and hub.channel is None and hub._tasks == []


async def test_a_leave_the_layer_does_not_answer_holds_no_later_join_up(settings):
    class Frozen(InMemoryChannelLayer):
        async def group_discard(self, group: str, channel: str) -> None:
            await asyncio.Event().wait()

    settings.WEFT_PUSH_TIMEOUT_SECONDS = 0.1
    hub = Fanout(Frozen())
    first, other = Page(), Page()
    await hub.join(A, first)
    await hub.join(B, other)
    leaving = asyncio.ensure_future(hub.leave(A, first))
    await asyncio.sleep(0)
    again = Page()
    await asyncio.wait_for(hub.join(A, again), 1)
    await leaving
    await hub.leave(A, again)
    await hub.leave(B, other)
