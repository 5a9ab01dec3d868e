"""The web socket origin check compares scheme, host and port, as Django's CSRF check does."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client

from accounts.models import User, Workspace
from weft.asgi import application

pytestmark = pytest.mark.django_db(transaction=True)


def _cookie(user: User) -> bytes:
    client = Client()
    client.force_login(user)
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}".encode()


async def _connect(user: User, workspace: Workspace, *, host: str, origin: str | None) -> bool:
    headers = [(b"host", host.encode()), (b"cookie", await sync_to_async(_cookie)(user))]
    if origin is not None:
        headers.append((b"origin", origin.encode()))
    socket = WebsocketCommunicator(application, f"/ws/w/{workspace.slug}/", headers=headers)
    connected, _ = await socket.connect()
    if connected:
        await socket.disconnect()
    return connected


@pytest.mark.parametrize(
    ("host", "origin"),
    [
        ("127.0.0.1:8000", "http://127.0.0.1:8000"),
        ("testserver", "http://testserver"),
        ("localhost:8000", "http://localhost:8000"),
        # The base URL's origin (a CSRF-trusted origin), as a browser behind a TLS proxy sends it.
        ("127.0.0.1", "http://127.0.0.1:8000"),
    ],
)
async def test_it_accepts_the_right_origin(alice, ws_a, host, origin):
    assert await _connect(alice, ws_a, host=host, origin=origin)


@pytest.mark.parametrize(
    ("host", "origin"),
    [
        ("127.0.0.1:8000", "http://127.0.0.1:9999"),
        ("localhost:8000", "http://localhost:3000"),
        ("testserver", "http://testserver:8080"),
        ("127.0.0.1:8000", "https://127.0.0.1:8000"),
        ("127.0.0.1:8000", "http://evil.example"),
        ("evil.example", "http://evil.example"),
        ("evil.example", "http://127.0.0.1:8000"),
        ("127.0.0.1:8000", None),
    ],
    ids=[
        "other-port",
        "other-localhost-port",
        "port-added",
        "other-scheme",
        "other-host",
        "bad-host",
        "bad-host-trusted-origin",
        "no-origin",
    ],
)
async def test_it_refuses_any_other_origin(alice, ws_a, host, origin):
    assert not await _connect(alice, ws_a, host=host, origin=origin)
