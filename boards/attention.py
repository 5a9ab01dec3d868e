"""Attention limits (admission control): pure values in, pure values out.

What waits on people (open reviews and questions, snoozed ones only once their snooze has
passed) is counted by the database (`boards.queries.waiting`); these rules take that count.
A workspace is full at 5 items with one person, 10 with two or more, or 45 estimated minutes,
whichever comes first. Starting a step a person already approved is exempt.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

SOLO_LIMIT = 5
TEAM_LIMIT = 10
MINUTE_LIMIT = 45
# What an agent may still do when refused: everything but starting new work.
ALLOWED_CALLS = (
    "report_progress",
    "get_my_work",
    "get_board_state",
    "search",
    "get_task",
    "complete_task",
    "release_task",
)


@dataclass(frozen=True)
class Attention:
    waiting: int
    limit: int
    minutes: int
    minute_limit: int
    oldest_age: timedelta | None
    full: bool
    # "items" or "minutes" when full, else "".
    reason: str = ""


def item_limit(people: int) -> int:
    return TEAM_LIMIT if people >= 2 else SOLO_LIMIT


def assess(
    *, waiting: int, minutes: int, oldest_at: datetime | None, people: int, now: datetime
) -> Attention:
    """The attention state from the waiting items' count, minutes and oldest creation time."""
    limit = item_limit(people)
    reason = "items" if waiting >= limit else "minutes" if minutes >= MINUTE_LIMIT else ""
    oldest_age = max(now - oldest_at, timedelta(0)) if oldest_at is not None else None
    return Attention(waiting, limit, minutes, MINUTE_LIMIT, oldest_age, bool(reason), reason)


def admits(attention: Attention, *, approved_step: bool) -> bool:
    """May a new task start? An approved step always may."""
    return approved_step or not attention.full


def age_text(age: timedelta | None) -> str:
    """A short age such as 2h14m, 9m or 0m."""
    if age is None:
        return "0m"
    minutes = int(age.total_seconds() // 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    if days:
        return f"{days}d{hours}h"
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m"


def refusal_message(attention: Attention) -> str:
    noun = "item waits" if attention.waiting == 1 else "items wait"
    return (
        f"{attention.waiting} {noun} on people (oldest {age_text(attention.oldest_age)},"
        f" ~{attention.minutes} min of review)"
    )


def refusal_condition(attention: Attention) -> str:
    """The Wait condition of a refusal: what a person must clear first."""
    if attention.reason == "items":
        return f"a person clears the Inbox below {attention.limit} items"
    return f"a person clears the Inbox below {attention.minute_limit} minutes of review"


def refusal_details(attention: Attention) -> dict[str, Any]:
    age = attention.oldest_age
    return {
        "size": attention.waiting,
        "limit": attention.limit,
        "oldestAgeSeconds": int(age.total_seconds()) if age is not None else 0,
        "minutes": attention.minutes,
        "minuteLimit": attention.minute_limit,
        "reason": attention.reason,
        "allowedCalls": list(ALLOWED_CALLS),
    }
