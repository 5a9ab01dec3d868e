"""Web socket routes of the boards app."""

from __future__ import annotations

from django.urls import path

from boards.consumers import WorkspaceConsumer

websocket_urlpatterns = [
    path("ws/w/<slug:slug>/", WorkspaceConsumer.as_asgi()),
]
