"""The web socket a workspace page listens on: `ws/w/<slug>/`, for people with a seat there."""

from __future__ import annotations

import logging
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from accounts.access import find_seat
from boards.fanout import LAYER_FAILED, Fanout, local_fanout

log = logging.getLogger(__name__)

# Application close code: not signed in, or no seat in this workspace (same answer for both).
REFUSED = 4403


@database_sync_to_async
def _workspace_id_for(user: Any, slug: str) -> int | None:
    seat = find_seat(user, slug)
    return seat.workspace_id if seat else None


class WorkspaceConsumer(AsyncJsonWebsocketConsumer):
    """Joins its process's fan-out for the workspace, which writes each event notice to the page."""

    # No channel of its own: the process's fan-out (boards/fanout.py) receives each workspace
    # message once and writes it to every socket of that workspace.
    channel_layer_alias = None
    fanout: Fanout | None = None
    workspace_id: int | None = None

    async def connect(self) -> None:
        slug = self.scope["url_route"]["kwargs"]["slug"]
        workspace_id = await _workspace_id_for(self.scope.get("user"), slug)
        if workspace_id is None:
            await self.close(code=REFUSED)
            return
        fanout = local_fanout()
        if fanout is not None:
            # Joined before the accept, so a push right after the page's socket opens reaches it.
            await fanout.join(workspace_id, self)
            self.fanout, self.workspace_id = fanout, workspace_id
        await self.accept()

    async def disconnect(self, code: int) -> None:
        if self.fanout is not None and self.workspace_id is not None:
            await self.fanout.leave(self.workspace_id, self)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        # The socket is push-only; a ping keeps proxies from closing an idle connection.
        if isinstance(content, dict) and content.get("type") == "ping":
            await self.send_json({"type": "pong"})

    async def send_frame(self, text: str) -> None:
        """One event notice from the fan-out; a closing socket drops it (its page re-fetches on reconnect)."""
        try:
            await self.send(text_data=text)
        except Exception:
            log.debug("live push: a frame to a closing socket was dropped", exc_info=True)

    async def close_for_layer(self) -> None:
        await self.close(code=LAYER_FAILED)
