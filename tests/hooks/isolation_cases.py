"""Isolation cases of the webhook tools, merged into tests/mcp/test_isolation.py's CASES.

The seed of that test holds no subscription, so unsubscribe is probed with A's task ids (which
name no subscription anywhere); tests/hooks/test_tools.py probes it with a real subscription of A.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tests.mcp.test_isolation import MISSING_ID, NOT_FOUND, Listed, Probe, Refused, SeedA


def _unsubscribe(a: SeedA) -> Iterator[Probe]:
    for task_id in a.task_ids:
        yield Refused({"id": task_id}, {"id": MISSING_ID}, NOT_FOUND)


CASES: dict[str, Any] = {
    "list_subscriptions": lambda a: iter([Listed({})]),
    "unsubscribe": _unsubscribe,
    # subscribe names no object: A's task id as its filter, to an address it refuses, answers as
    # a made-up id does (what it would create belongs to the caller's workspace anyway).
    "subscribe": lambda a: (
        Refused(
            {"url": "https://10.0.0.1/in", "entityType": "task", "entityId": str(task_id)},
            {"url": "https://10.0.0.1/in", "entityType": "task", "entityId": str(MISSING_ID)},
            "invalid_argument",
        )
        for task_id in a.task_ids[:1]
    ),
}
