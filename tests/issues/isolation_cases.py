"""Isolation cases of the issue tools, merged into tests/mcp/test_isolation.py's CASES.

The seed of that test holds no issue, so get_issue_status, add_issue_message and triage_issue are probed with
A's task ids (which name no issue anywhere); submit_issue is probed with links to A's tasks and
board. tests/issues/test_isolation.py probes every tool with real issues and runs of A.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tests.mcp.test_isolation import MISSING_ID, NOT_FOUND, Listed, Probe, Refused, SeedA

REPORT = {"title": "From B", "body": "Filed by workspace B.", "kind": "bug", "reporter_app_version": "1.0.0"}


# Two ids each: the test's workspace B is on the Free plan, whose 200 calls the whole run shares.
def _by_issue(a: SeedA, **extra: Any) -> Iterator[Probe]:
    for task_id in a.task_ids[:2]:
        yield Refused({"id": task_id, **extra}, {"id": MISSING_ID, **extra}, NOT_FOUND)


def _links(a: SeedA) -> Iterator[Probe]:
    targets = [f"task:{a.task_ids[0]}", f"board:{a.board_id}"]
    for target in targets:
        kind = target.partition(":")[0]
        yield Refused(
            {**REPORT, "entity_ids_to_link": [target]},
            {**REPORT, "entity_ids_to_link": [f"{kind}:{MISSING_ID}"]},
            NOT_FOUND,
        )


CASES: dict[str, Any] = {
    "get_issue_status": _by_issue,
    "add_issue_message": lambda a: _by_issue(a, body="Written by B", reporter_app_version="1.0.0"),
    "submit_issue": _links,
    # B's agent is its owner's, so it passes the maintainers' seat rule and meets the issue scope.
    "triage_issue": lambda a: _by_issue(a, action="resolve", body="Resolved by B"),
    "list_issues": lambda a: iter([Listed({})]),
}
