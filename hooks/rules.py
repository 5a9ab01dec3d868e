"""PURE: what a subscription may hold, which events it receives, and when a failed delivery retries.

No ORM and no clock reads: the services pass values in and apply what comes back.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from weft.event_types import unknown_entity_type, unknown_type

MAX_PER_WORKSPACE = 50
URL = 2_000
EVENT_TYPES = 30
EVENT_TYPE = 64
ENTITY_TYPE = 32
ENTITY_ID = 64

EVENT_TYPE_PATTERN = re.compile(r"[a-z][a-z_]*\.[a-z][a-z_]*")
ENTITY_TYPE_PATTERN = re.compile(r"[a-z][a-z_]*")

# After the n-th failed attempt the next one waits RETRY_DELAYS[n - 1]; after the last, the delivery fails.
RETRY_DELAYS: tuple[timedelta, ...] = (
    timedelta(seconds=5),
    timedelta(minutes=5),
    timedelta(minutes=30),
    timedelta(hours=2),
    timedelta(hours=5),
    timedelta(hours=10),
)
# A 410 Gone means the receiver asks us to stop: the subscription is disabled.
GONE = 410


class FilterError(ValueError):
    """A filter or URL a subscription cannot hold: the field and the reason."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


@dataclass(frozen=True)
class Filter:
    """Which events a subscription receives: every given part must match (at least one is given)."""

    event_types: tuple[str, ...] = ()
    entity_type: str = ""
    entity_id: str = ""

    def matches(self, *, type: str, entity_type: str, entity_id: str) -> bool:
        if self.event_types and type not in self.event_types:
            return False
        if self.entity_type and entity_type != self.entity_type:
            return False
        return not self.entity_id or entity_id == self.entity_id

    def as_json(self) -> dict[str, Any]:
        return {
            "eventTypes": list(self.event_types),
            "entityType": self.entity_type or None,
            "entityId": self.entity_id or None,
        }


def _text(field: str, value: Any, limit: int, pattern: re.Pattern[str] | None = None) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise FilterError(field, "must be a string")
    value = value.strip()
    if len(value) > limit:
        raise FilterError(field, f"at most {limit} characters")
    if "\x00" in value:
        raise FilterError(field, "must not contain NUL (\\u0000) characters")
    if value and pattern is not None and not pattern.fullmatch(value):
        raise FilterError(field, f"must look like {pattern.pattern}")
    return value


def clean_filter(*, event_types: Sequence[Any] | None, entity_type: Any, entity_id: Any) -> Filter:
    """The filter as stored; FilterError when a part is invalid or no part is given."""
    types = list(event_types or [])
    if len(types) > EVENT_TYPES:
        raise FilterError("eventTypes", f"at most {EVENT_TYPES} event types")
    names = [_text(f"eventTypes[{i}]", t, EVENT_TYPE, EVENT_TYPE_PATTERN) for i, t in enumerate(types)]
    for i, name in enumerate(names):
        if not name:
            raise FilterError("eventTypes", "an event type must not be empty")
        if (reason := unknown_type(name)) is not None:
            raise FilterError(f"eventTypes[{i}]", reason)
    cleaned = tuple(dict.fromkeys(names))
    result = Filter(
        event_types=cleaned,
        entity_type=_text("entityType", entity_type, ENTITY_TYPE, ENTITY_TYPE_PATTERN),
        entity_id=_text("entityId", entity_id, ENTITY_ID),
    )
    if not (result.event_types or result.entity_type or result.entity_id):
        raise FilterError(
            "filter",
            "give eventTypes, entityType, or entityType with entityId (a subscription needs a filter)",
        )
    if result.entity_type and (reason := unknown_entity_type(result.entity_type)) is not None:
        raise FilterError("entityType", reason)
    if result.entity_id and not result.entity_type:
        # Ids are per entity type: task 7 and run 7 are different entities.
        raise FilterError("entityType", "give the entity's type with entityId (ids are counted per type)")
    return result


def stored_filter(row: Mapping[str, Any]) -> Filter:
    """The filter of a stored subscription's fields."""
    return Filter(
        event_types=tuple(row.get("event_types") or ()),
        entity_type=row.get("entity_type") or "",
        entity_id=row.get("entity_id") or "",
    )


def next_attempt(*, failures: int, now: datetime) -> datetime | None:
    """When the attempt after `failures` failed ones runs; None when the delivery has failed for good."""
    if failures < 1 or failures > len(RETRY_DELAYS):
        return None
    return now + RETRY_DELAYS[failures - 1]


def delivered(status: int | None) -> bool:
    return status is not None and 200 <= status < 300
