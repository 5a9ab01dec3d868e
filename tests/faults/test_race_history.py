"""The history checker over the event log of a claim race on PostgreSQL: threads claim, beat,
release and complete contended tasks while two people decide each review at once."""

from __future__ import annotations

import random
import threading
import time
from typing import Any

import pytest

from accounts.models import AgentConnection, Plan, Workspace
from bench.faults import check
from bench.faults.db import records
from boards.models import InboxItem
from boards.services import inbox_decide, run_complete, run_heartbeat, run_release, task_claim, task_create
from tests.boards.helpers import race
from weft.errors import WeftError

pytestmark = pytest.mark.django_db(transaction=True)
AGENTS = 12


def _call(
    log: list[dict[str, Any]], lock: threading.Lock, op: str, fn: Any, args: dict[str, Any], **record: Any
) -> Any:
    """fn(**args), recorded as a client records a call; its result, or None when refused."""
    sent = time.time()
    try:
        result, outcome = fn(**args), "ok"
    except WeftError as exc:
        result, outcome = None, exc.code
    with lock:
        log.append({"op": op, "sent": sent, "recv": time.time(), "outcome": outcome, **record})
    return result


def _work(agent: AgentConnection, ids: list[int], log: list[dict[str, Any]], lock: threading.Lock) -> None:
    name, rng = f"agent {agent.pk}", random.Random(agent.pk)
    for task_id in rng.sample(ids, len(ids)):
        claim = _call(log, lock, "start", task_claim, {"task_id": task_id, "connection": agent}, agent=name)
        if claim is None:
            continue
        lease = {"workspace": agent.workspace, "run_id": claim.run.run_id, "lease_token": claim.lease_token}
        run = str(claim.run.run_id)
        _call(log, lock, "heartbeat", run_heartbeat, {"note": "racing", **lease}, agent=name, run=run)
        if rng.random() < 0.3:
            _call(log, lock, "release", run_release, {"reason": "racing", **lease}, agent=name, run=run)
        else:
            _call(log, lock, "complete", run_complete, {"outcome": "raced", **lease}, agent=name, run=run)


@pytest.fixture
def pro(ws_a: Workspace) -> Workspace:
    ws_a.plan = Plan.named(Plan.PRO)
    ws_a.save(update_fields=["plan"])
    return ws_a


def test_the_checker_finds_no_violation_in_a_claim_race(on_postgres, pro, alice):
    agents = [
        AgentConnection.objects.create(workspace=pro, user=alice, name=f"agent {n}") for n in range(AGENTS)
    ]
    agents = list(AgentConnection.objects.select_related("workspace").filter(pk__in=[a.pk for a in agents]))
    ids = [task_create(workspace=pro, title=f"Contended {n}", by_user=alice).task.pk for n in range(24)]
    ids += [
        task_create(workspace=pro, title=f"Review {n}", by_user=alice, review_required=True).task.pk
        for n in range(4)
    ]
    history: list[dict[str, Any]] = []
    lock = threading.Lock()
    assert not [o for o in race(agents, lambda a: _work(a, ids, history, lock)) if o is not None]
    for item in InboxItem.objects.filter(workspace=pro, state="open"):

        def decide(decision: str, item: InboxItem = item) -> None:
            args = {"item": InboxItem.objects.get(pk=item.pk), "user": alice, "decision": decision}
            _call(
                history, lock, "decide", inbox_decide, args, agent=decision, item=item.pk, decision=decision
            )

        race(["accept", "drop"], decide)
    events, runs = records(pro.pk)
    violations = check.check(events, runs, history)
    assert not violations, violations[0].render()
    summary = check.summary(events, runs, history)
    assert summary["claims"] >= len(ids) and summary["outcomes"].get("start:already_claimed", 0) > 0, summary
    assert summary["outcomes"].get("decide:ok", 0) >= 1, summary
