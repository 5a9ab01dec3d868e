"""PURE: the size of every text field and list an agent or a person can send, and the checks.

One table for every surface: the MCP tools put these numbers in their input schemas, the
services enforce them for every caller, and docs/limits.md lists them. A value past its limit
is refused with `invalid_argument`; nothing is silently cut. Every accepted value round-trips
through the database and every reader: no NUL characters (PostgreSQL text and jsonb refuse
them) and no datetimes outside the range every reader can represent.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

TITLE = 200
BOARD_NAME = 100
DESCRIPTION = 20_000
NOTE = 2_000
STATUS = 100
QUESTION = 500
OPTIONS = 10
OPTION = 200
OUTCOME = 10_000
NEXT_STEP = 2_000
# The run's end_reason column is 200 wide: nothing past it is kept, so nothing past it is taken.
REASON = 200
EVIDENCE_ITEMS = 50
EVIDENCE_ITEM = 1_000
ARTIFACTS = 50
ARTIFACT_JSON = 4_000
URI = 2_000
SEARCH_QUERY = 200
SEARCH_TERMS = 16
SEARCH_LIMIT = 100
PERSON_NOTE = 5_000
CHECKS = 20
CHECK_JSON = 1_000
LABEL_NAME = 40
TASK_LABELS = 10
LEASE_TOKEN = 200
RUN_ID = 100
REVIEW_MINUTES_MIN = 1
REVIEW_MINUTES_MAX = 480
# get_board_state: tasks per column in one answer, how far a column's count goes, a cursor's size.
BOARD_PAGE = 50
BOARD_COUNT_MAX = 1_000
BOARD_CURSOR = 120
# Ids are 64-bit in the database; anything larger cannot name a row.
ID_MAX = 2**63 - 1
# Due dates every reader can show: Python's datetime stops at year 9999 and PostgreSQL keeps
# years before 1; after conversion to UTC an offset could push a value past either edge.
DUE_MIN = datetime(1970, 1, 1, tzinfo=UTC)
DUE_MAX = datetime(3000, 1, 1, tzinfo=UTC)

NUL = "\x00"


class LimitError(ValueError):
    """A value past its limit: the field and the reason, for `invalid_argument`."""

    def __init__(
        self, field: str, reason: str, *, problem: str = "invalid", limit: int | None = None
    ) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason
        # "too_long" (with `limit`), "nul", "empty", "type", "range" or "invalid".
        self.problem = problem
        self.limit = limit


def text(field: str, value: Any, limit: int, *, required: bool = False, strip: bool = True) -> str:
    """A text value within `limit` characters, without NUL; empty is allowed unless `required`."""
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise LimitError(field, "must be a string", problem="type")
    if NUL in value:
        raise LimitError(field, "must not contain NUL (\\u0000) characters", problem="nul")
    cleaned = value.strip() if strip else value
    if required and not cleaned:
        raise LimitError(field, "must not be empty", problem="empty")
    if len(cleaned) > limit:
        raise LimitError(
            field, f"at most {limit} characters (got {len(cleaned)})", problem="too_long", limit=limit
        )
    return cleaned


def text_list(field: str, value: Any, *, items: int, item: int) -> list[str]:
    """A list of at most `items` strings of at most `item` characters each."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise LimitError(field, "must be a list of strings", problem="type")
    return [text(f"{field}[{i}]", v, item) for i, v in enumerate(at_most(field, value, items))]


def at_most(field: str, items: list[Any], limit: int) -> list[Any]:
    """The list itself when it has at most `limit` items."""
    if len(items) > limit:
        raise LimitError(field, f"at most {limit} items (got {len(items)})", problem="too_long", limit=limit)
    return items


def nul_path(value: Any, path: tuple[Any, ...] = ()) -> tuple[Any, ...] | None:
    """The path of the first string (or key) of a JSON value holding a NUL character, if any."""
    if isinstance(value, str):
        return path if NUL in value else None
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = nul_path(item, (*path, index))
            if found is not None:
                return found
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and NUL in key:
                return (*path, key)
            found = nul_path(item, (*path, key))
            if found is not None:
                return found
    return None


def without_nul(value: Any) -> Any:
    """The same JSON value with every NUL character removed (keys included)."""
    if isinstance(value, str):
        return value.replace(NUL, "")
    if isinstance(value, list):
        return [without_nul(v) for v in value]
    if isinstance(value, dict):
        return {without_nul(k): without_nul(v) for k, v in value.items()}
    return value


def without_nul_anywhere(field: str, value: Any) -> None:
    """Refuse a JSON value that holds a NUL character at any depth."""
    if nul_path(value) is not None:
        raise LimitError(field, "must not contain NUL (\\u0000) characters", problem="nul")


def due(field: str, value: datetime | None) -> datetime | None:
    """A due date inside the range every reader can represent; a naive value is read as UTC."""
    if value is None:
        return None
    if not isinstance(value, datetime):
        raise LimitError(field, "an ISO 8601 date and time, or null", problem="type")
    aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    try:
        utc = aware.astimezone(UTC)
    except (OverflowError, ValueError):
        raise LimitError(field, _due_range(), problem="range") from None
    if not DUE_MIN <= utc < DUE_MAX:
        raise LimitError(field, _due_range(), problem="range")
    return utc


def _due_range() -> str:
    return f"between {DUE_MIN.date().isoformat()} and {DUE_MAX.date().isoformat()} (UTC, exclusive)"


def review_minutes(field: str, value: Any) -> int:
    reason = f"a whole number from {REVIEW_MINUTES_MIN} to {REVIEW_MINUTES_MAX}"
    if isinstance(value, bool) or not isinstance(value, int):
        raise LimitError(field, reason, problem="type")
    if not REVIEW_MINUTES_MIN <= value <= REVIEW_MINUTES_MAX:
        raise LimitError(field, reason, problem="range")
    return value
