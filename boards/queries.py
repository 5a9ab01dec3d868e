"""The board's shared conditions, written once as query filters: which runs hold their task and
which Inbox items wait on people. Every read and write that asks either question uses these.

A run holds its task only in a live state and strictly before its lease expires (the rule
`lease.is_live` states for one run): an expired run that no sweep has ended yet holds nothing,
for people and agents alike. An Inbox item waits on people while open, or once its snooze has
passed; an item snoozed into the future is "later", not waiting.

`via` names the relation when the filter is applied from another model (`"runs"` from a task,
`"inbox"` from a workspace).
"""

from __future__ import annotations

from datetime import datetime

from django.db.models import Q

from boards import lease
from boards.models import InboxState

UNDECIDED = (InboxState.OPEN, InboxState.SNOOZED)


def _at(via: str) -> str:
    return f"{via}__" if via else ""


def held(now: datetime, via: str = "") -> Q:
    """Runs that hold their task at `now`."""
    at = _at(via)
    return Q(**{f"{at}state__in": sorted(lease.LIVE_STATES), f"{at}lease_expires_at__gt": now})


def waiting(now: datetime, via: str = "") -> Q:
    """Inbox items that wait on a person's decision at `now`."""
    at = _at(via)
    return Q(**{f"{at}state": InboxState.OPEN}) | Q(
        **{f"{at}state": InboxState.SNOOZED, f"{at}snoozed_until__lte": now}
    )


def undecided(via: str = "") -> Q:
    """Inbox items nobody has decided yet: waiting now, or snoozed for later."""
    return Q(**{f"{_at(via)}state__in": UNDECIDED})
