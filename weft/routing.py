"""Web socket routes (Channels)."""

from __future__ import annotations

from typing import Any

from boards.routing import websocket_urlpatterns as boards_websockets

websocket_urlpatterns: list[Any] = [*boards_websockets]
