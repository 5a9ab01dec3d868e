"""What a stream client asks for: an optional filter, like a subscription's, and a cursor to resume from."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from weft.errors import WeftError, invalid_argument
from weft.event_types import unknown_entity_type, unknown_type

MAX_TYPES = 30
TYPE_PATTERN = re.compile(r"[a-z][a-z_]*\.[a-z][a-z_]*")
ENTITY_TYPE_PATTERN = re.compile(r"[a-z][a-z_]*")
MAX_TYPE_LENGTH = 64
MAX_ENTITY_TYPE_LENGTH = 32
MAX_ENTITY_ID_LENGTH = 64
# A cursor is a position: a non-negative integer that fits a PostgreSQL bigint.
CURSOR_PATTERN = re.compile(r"0|[1-9][0-9]{0,17}")
PARAMETERS = ("types", "entity_type", "entity_id", "after")

# The corrected request, per field, that a 400 answers with.
FIXES = {
    "types": "pass types as a comma-separated list of event types, e.g. types=task.created,run.started",
    "entity_type": "pass entity_type as one entity type, e.g. entity_type=task",
    "entity_id": "pass entity_id as the entity's id as events carry it, e.g. entity_id=42",
    "after": "pass after (or Last-Event-ID) as the id of the last event you received, e.g. after=1200",
    "Last-Event-ID": "send Last-Event-ID as the id of the last event you received, or leave it out",
    "query": "use only types, entity_type, entity_id and after, each at most once",
}


@dataclass(frozen=True)
class StreamFilter:
    """Which events of the workspace a client gets: every part given must match (none: all)."""

    types: frozenset[str] = frozenset()
    entity_type: str | None = None
    entity_id: str | None = None

    def matches(self, *, type: str, entity_type: str, entity_id: str) -> bool:
        if self.types and type not in self.types:
            return False
        if self.entity_type is not None and entity_type != self.entity_type:
            return False
        return self.entity_id is None or entity_id == self.entity_id

    def read_arguments(self) -> dict[str, Any]:
        """The same filter as keyword arguments of `weft.events.read`."""
        return {
            "types": sorted(self.types) or None,
            "entity_type": self.entity_type,
            "entity_id": self.entity_id,
        }


@dataclass(frozen=True)
class StreamRequest:
    filter: StreamFilter
    # The last position the client has seen; None: it starts from now.
    after: int | None
    # Where the cursor came from, to name it in a refusal.
    cursor_field: str = "after"

    def check_cursor(self, newest: int) -> None:
        """A cursor past the log's newest position was never an id this log sent (another
        server's, or made up): following it would drop every event up to it in silence."""
        if self.after is not None and self.after > newest:
            raise invalid_argument(self.cursor_field, f"{self.after} is past the newest event id, {newest}")


def parse_request(query_string: str, last_event_id: str | None) -> StreamRequest:
    """Validate the query and the Last-Event-ID header (which wins over `after`: a browser's
    EventSource reconnects to the same URL with the header of the last event it got)."""
    values = _single_values(query_string)
    types = _types(values.get("types"))
    entity_type = _text("entity_type", values.get("entity_type"), MAX_ENTITY_TYPE_LENGTH, ENTITY_TYPE_PATTERN)
    entity_id = _text("entity_id", values.get("entity_id"), MAX_ENTITY_ID_LENGTH, None)
    if last_event_id is not None and last_event_id.strip():
        field, after = "Last-Event-ID", _cursor("Last-Event-ID", last_event_id.strip())
    elif "after" in values:
        field, after = "after", _cursor("after", values["after"])
    else:
        field, after = "after", None
    return StreamRequest(StreamFilter(types, entity_type, entity_id), after, field)


def fix_for(error: WeftError) -> str:
    return FIXES.get(str(error.details.get("field")), FIXES["query"])


def _single_values(query_string: str) -> dict[str, str]:
    try:
        pairs = parse_qsl(query_string, keep_blank_values=True, strict_parsing=bool(query_string))
    except ValueError:
        raise invalid_argument("query", "the query string is malformed") from None
    values: dict[str, str] = {}
    for name, value in pairs:
        if name not in PARAMETERS:
            raise invalid_argument("query", f"unknown parameter {name!r}")
        if name in values:
            raise invalid_argument("query", f"parameter {name!r} is given twice")
        values[name] = value
    return values


def _types(raw: str | None) -> frozenset[str]:
    if raw is None:
        return frozenset()
    types = [part.strip() for part in raw.split(",")]
    if len(types) > MAX_TYPES:
        raise invalid_argument("types", f"at most {MAX_TYPES} event types")
    for name in types:
        if len(name) > MAX_TYPE_LENGTH or not TYPE_PATTERN.fullmatch(name):
            raise invalid_argument("types", f"{name[:MAX_TYPE_LENGTH]!r} is not an event type")
        if (reason := unknown_type(name)) is not None:
            raise invalid_argument("types", reason)
    return frozenset(types)


def _text(field: str, raw: str | None, limit: int, pattern: re.Pattern[str] | None) -> str | None:
    if raw is None:
        return None
    if not raw or len(raw) > limit or not raw.isprintable() or raw != raw.strip():
        raise invalid_argument(field, f"must be 1 to {limit} printable characters without surrounding spaces")
    if pattern is not None and not pattern.fullmatch(raw):
        raise invalid_argument(field, f"{raw!r} is not an entity type")
    if pattern is not None and (reason := unknown_entity_type(raw)) is not None:
        raise invalid_argument(field, reason)
    return raw


def _cursor(field: str, raw: str) -> int:
    if not CURSOR_PATTERN.fullmatch(raw):
        raise invalid_argument(field, f"{raw[:40]!r} is not an event id")
    return int(raw)
