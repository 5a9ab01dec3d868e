"""The workspace web socket: session-authenticated, scoped to seats, one group per workspace."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client

from accounts.models import AgentConnection, User, Workspace
from boards import services
from boards.consumers import REFUSED
from boards.fanout import LAYER_FAILED
from boards.models import InboxItem
from boards.push import push_event, workspace_group
from tests.web.factories import make_review
from weft.asgi import application
from weft.models import Event

pytestmark = pytest.mark.django_db(transaction=True)


def _cookie(user: User | None) -> bytes:
    if user is None:
        return b""
    client = Client()
    client.force_login(user)
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}".encode()


async def _socket(user: User | None, workspace: Workspace | str) -> WebsocketCommunicator:
    slug = workspace if isinstance(workspace, str) else workspace.slug
    headers = [(b"origin", b"http://testserver"), (b"host", b"testserver")]
    cookie = await sync_to_async(_cookie)(user)
    if cookie:
        headers.append((b"cookie", cookie))
    return WebsocketCommunicator(application, f"/ws/w/{slug}/", headers=headers)


def _event(workspace: Workspace, position: int = 1) -> Event:
    return Event(
        workspace_id=workspace.pk,
        position=position,
        type="inbox.item_created",
        entity_type="inbox_item",
        entity_id="42",
    )


async def test_it_pushes_a_workspace_event_to_a_member(alice, bob, ws_a):
    for user in (alice, bob):
        socket = await _socket(user, ws_a)
        connected, _ = await socket.connect()
        assert connected
        await sync_to_async(push_event)(_event(ws_a, position=7))
        message = await socket.receive_json_from(timeout=2)
        assert message == {
            "type": "event",
            "position": 7,
            "event": "inbox.item_created",
            "entity_type": "inbox_item",
            "entity_id": "42",
        }
        await socket.disconnect()


async def test_it_never_pushes_workspace_a_events_to_workspace_b(alice, carol, ws_a, ws_b):
    theirs = await _socket(carol, ws_b)
    ours = await _socket(alice, ws_a)
    assert (await theirs.connect())[0]
    assert (await ours.connect())[0]
    await sync_to_async(push_event)(_event(ws_a))
    assert (await ours.receive_json_from(timeout=2))["event"] == "inbox.item_created"
    assert await theirs.receive_nothing(timeout=0.3)
    await sync_to_async(push_event)(_event(ws_b, position=3))
    assert (await theirs.receive_json_from(timeout=2))["position"] == 3
    assert await ours.receive_nothing(timeout=0.3)
    await theirs.disconnect()
    await ours.disconnect()


async def test_it_refuses_a_socket_for_a_workspace_without_a_seat(carol, ws_a, ws_b):
    socket = await _socket(carol, ws_a)
    connected, code = await socket.connect()
    assert not connected
    assert code == REFUSED


async def test_it_refuses_an_anonymous_socket(ws_a):
    socket = await _socket(None, ws_a)
    connected, code = await socket.connect()
    assert not connected
    assert code == REFUSED


async def test_it_refuses_a_missing_workspace(alice, ws_a):
    connected, code = await (await _socket(alice, "no-such-workspace")).connect()
    assert not connected
    assert code == REFUSED


async def test_it_answers_a_ping(alice, ws_a):
    socket = await _socket(alice, ws_a)
    assert (await socket.connect())[0]
    await socket.send_json_to({"type": "ping"})
    assert await socket.receive_json_from(timeout=2) == {"type": "pong"}
    await socket.disconnect()


async def test_it_pushes_through_the_redis_channel_layer(alice, bob, carol, ws_a, ws_b, redis_url, settings):
    import redis

    settings.CHANNEL_LAYERS = {
        "default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": [redis_url]}}
    }
    ours = [await _socket(alice, ws_a), await _socket(bob, ws_a)]
    theirs = await _socket(carol, ws_b)
    for socket in [*ours, theirs]:
        assert (await socket.connect())[0]
    # One member per process, however many of its sockets are open in the workspace.
    members = redis.Redis.from_url(redis_url).zcard(f"asgi:group:{workspace_group(ws_a.pk)}")
    assert members == 1
    await sync_to_async(push_event)(_event(ws_a, position=11))
    for socket in ours:
        assert (await socket.receive_json_from(timeout=3))["position"] == 11
    assert await theirs.receive_nothing(timeout=0.5)
    for socket in [*ours, theirs]:
        await socket.disconnect()


async def test_its_sockets_share_one_group_member_until_the_last_one_closes(alice, bob, ws_a):
    sockets = [await _socket(alice, ws_a), await _socket(bob, ws_a), await _socket(alice, ws_a)]
    for socket in sockets:
        assert (await socket.connect())[0]
    groups = get_channel_layer().groups  # type: ignore[union-attr]
    assert len(groups[workspace_group(ws_a.pk)]) == 1
    await sync_to_async(push_event)(_event(ws_a, position=5))
    for socket in sockets:
        assert (await socket.receive_json_from(timeout=2))["position"] == 5
    await sockets[0].disconnect()
    await sockets[1].disconnect()
    assert len(groups[workspace_group(ws_a.pk)]) == 1
    await sockets[2].disconnect()
    assert workspace_group(ws_a.pk) not in groups


async def test_it_closes_the_socket_when_the_channel_layer_fails_so_the_page_refetches(alice, ws_a, settings):
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "tests.web.test_live_fanout.FailingLayer"}}
    socket = await _socket(alice, ws_a)
    assert (await socket.connect())[0]
    get_channel_layer().broken.set()  # type: ignore[union-attr]
    closed = await socket.receive_output(timeout=2)
    assert closed == {"type": "websocket.close", "code": LAYER_FAILED}


async def test_it_pushes_a_committed_inbox_decision_to_the_workspace(alice, ws_a):
    def decide() -> None:
        connection = AgentConnection.objects.create(workspace=ws_a, user=alice, name="Claude Code")
        item = make_review(ws_a, connection)
        services.inbox_decide(item=InboxItem.objects.get(pk=item.pk), user=alice, decision="accept")

    socket = await _socket(alice, ws_a)
    assert (await socket.connect())[0]
    await sync_to_async(decide)()
    message = await socket.receive_json_from(timeout=2)
    assert message["event"] == "inbox.item_decided"
    assert message["entity_type"] == "inbox_item"
    await socket.disconnect()
