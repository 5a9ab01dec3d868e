"""The web socket a workspace page listens on: `ws/w/<slug>/`, for people with a seat there."""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from accounts.access import find_seat
from boards.push import workspace_group

# Application close code: not signed in, or no seat in this workspace (same answer for both).
REFUSED = 4403


@database_sync_to_async
def _workspace_id_for(user: Any, slug: str) -> int | None:
    seat = find_seat(user, slug)
    return seat.workspace_id if seat else None


class WorkspaceConsumer(AsyncJsonWebsocketConsumer):
    """Joins the workspace's group and forwards each event notice to the page."""

    group: str | None = None

    async def connect(self) -> None:
        slug = self.scope["url_route"]["kwargs"]["slug"]
        workspace_id = await _workspace_id_for(self.scope.get("user"), slug)
        if workspace_id is None:
            await self.close(code=REFUSED)
            return
        self.group = workspace_group(workspace_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()

    async def disconnect(self, code: int) -> None:
        if self.group is not None:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        # The socket is push-only; a ping keeps proxies from closing an idle connection.
        if isinstance(content, dict) and content.get("type") == "ping":
            await self.send_json({"type": "pong"})

    async def workspace_event(self, message: dict[str, Any]) -> None:
        await self.send_json(
            {
                "type": "event",
                "position": message["position"],
                "event": message["event"],
                "entity_type": message["entity_type"],
                "entity_id": message["entity_id"],
            }
        )
