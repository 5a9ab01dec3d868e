"""A pure model of what waits on people, for testing the attention rules on plain values.

Production counts the waiting items in the database (`boards.queries.waiting` inside
`services.common.attention_now`); `test_attention_model.py` proves this model agrees with it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from boards import attention

OPEN = "open"
SNOOZED = "snoozed"


@dataclass(frozen=True)
class WaitingItem:
    created_at: datetime
    estimated_minutes: int
    state: str = OPEN
    snoozed_until: datetime | None = None


def counts(state: str, snoozed_until: datetime | None, now: datetime) -> bool:
    """An item waits on people when open, or snoozed past its snooze (it is back)."""
    if state == OPEN:
        return True
    return state == SNOOZED and snoozed_until is not None and snoozed_until <= now


def assess_items(items: Iterable[WaitingItem], *, people: int, now: datetime) -> attention.Attention:
    waiting = [i for i in items if counts(i.state, i.snoozed_until, now)]
    return attention.assess(
        waiting=len(waiting),
        minutes=sum(i.estimated_minutes for i in waiting),
        oldest_at=min((i.created_at for i in waiting), default=None),
        people=people,
        now=now,
    )
