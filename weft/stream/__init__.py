"""The SSE event stream, `GET /api/v1/events/stream`: a workspace's event log, live, for its agents' tokens.

- `request.py` parses and validates what a client asks for (filter, cursor): pure.
- `feed.py` holds the one poller per process that reads new events for every workspace with an
  open stream and fans them out to in-memory per-client queues, so an idle client costs no
  database connection.
- `app.py` is the ASGI surface: bearer token → workspace, catch-up from the client's cursor,
  then the live feed, heartbeats and the `gap` event. docs/events.md describes the protocol.
"""

from __future__ import annotations

STREAM_PATH = "/api/v1/events/stream"
