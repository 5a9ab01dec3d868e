"""The history checker catches each invariant's violation in a hand-written bad history.

Each test writes the smallest story that breaks one rule beside a good story that keeps every
rule; the good one must pass, so a checker that flags everything fails here too.
"""

from __future__ import annotations

from typing import Any

from bench.faults import check

A, B = "run-a", "run-b"


def ev(position: int | None, type: str, run: str | None = None, epoch: int | None = None, **payload: Any):
    """One event of task 7 as the log dump holds it."""
    if type.startswith("task."):
        return {"position": position, "type": type, "entity_type": "task", "entity_id": "7",
                "payload": {"taskId": 7, **payload}, "epoch": epoch}  # fmt: skip
    entity = (
        ("inbox_item", str(payload.get("itemId")))
        if type.startswith(("inbox.", "question."))
        else ("run", run)
    )
    body = {"taskId": 7, **({"runId": run} if run else {}), **payload}
    return {"position": position, "type": type, "entity_type": entity[0], "entity_id": entity[1],
            "payload": body, "epoch": epoch}  # fmt: skip


def run_row(run: str, started: str, ended: str | None, expires: str | None, epoch: int = 1):
    return {"run_id": run, "task_id": 7, "epoch": epoch, "state": "x",
            "started_at": f"2026-12-03T10:00:{started}+00:00",
            "ended_at": ended and f"2026-12-03T10:00:{ended}+00:00",
            "lease_expires_at": expires and f"2026-12-03T10:00:{expires}+00:00"}  # fmt: skip


def call(op: str, outcome: str, sent: float, run: str | None = A, **more: Any):
    return {"agent": "a1", "op": op, "task": 7, "run": run, "sent": sent, "recv": sent + 0.1,
            "outcome": outcome, **more}  # fmt: skip


# A stale lease taken over: A claims (epoch 1), goes silent and expires (2), B claims (3) and completes.
GOOD_EVENTS = [
    ev(1, "task.created"),
    ev(2, "run.started", A, 1),
    ev(3, "run.heartbeat", A, 1),
    ev(4, "run.stale", A, 2),
    ev(5, "run.started", B, 3),
    ev(6, "run.completed", B, 3),
    ev(7, "inbox.item_created", itemId=9),
    ev(8, "inbox.item_decided", itemId=9, decision="later"),
    ev(9, "inbox.item_decided", itemId=9, decision="accept"),
]
GOOD_RUNS = [run_row(A, "00", "09", "05", 1), run_row(B, "05", "06", "10", 3)]
GOOD_HISTORY = [
    call("start", "ok", 0.0),
    call("heartbeat", "ok", 1.0),
    call("start", "ok", 5.0, run=B),
    call("complete", "ok", 6.0, run=B),
    call("heartbeat", "lease_lost", 7.0),
    call("complete", "lease_lost", 7.5),
    call("decide", "ok", 8.0, run=None, item=9, decision="accept"),
    call("decide", "already_decided", 8.1, run=None, item=9, decision="accept"),
]


def rules(events=GOOD_EVENTS, runs=GOOD_RUNS, history=GOOD_HISTORY) -> list[str]:  # type: ignore[no-untyped-def]
    return [violation.rule for violation in check.check(events, runs, history)]


def test_it_passes_a_history_that_keeps_every_rule():
    assert rules() == []


def test_it_catches_two_leases_of_one_task_overlapping_in_database_time():
    # B claimed at :04 while A's lease ran to :05.
    runs = [run_row(A, "00", "09", "05", 1), run_row(B, "04", "06", "10", 3)]
    assert rules(runs=runs) == [check.OVERLAP]


def test_it_catches_a_claim_while_the_log_holds_a_live_run():
    events = [e for e in GOOD_EVENTS if e["type"] != "run.stale"]
    assert check.OVERLAP in rules(events=events)


def test_it_catches_a_write_with_a_stale_epoch_in_the_log():
    # A's heartbeat after the expiry fenced it off (epoch 1 against the task's 2).
    events = [
        *GOOD_EVENTS[:4],
        ev(5, "run.heartbeat", A, 1),
        *[{**e, "position": e["position"] + 1} for e in GOOD_EVENTS[4:]],
    ]
    assert rules(events=events) == [check.STALE_WRITE]


def test_it_catches_a_write_that_succeeded_after_its_lease_was_lost():
    history = [*GOOD_HISTORY, call("heartbeat", "ok", 9.0)]
    assert rules(history=history) == [check.STALE_WRITE]


def test_it_catches_an_acknowledged_completion_missing_from_the_log():
    events = [e for e in GOOD_EVENTS if e["type"] != "run.completed"]
    assert rules(events=events) == [check.COMPLETION]


def test_it_catches_a_completion_recorded_twice():
    events = [*GOOD_EVENTS, ev(10, "run.completed", B, 3)]
    assert check.COMPLETION in rules(events=events)


def test_it_catches_a_second_run_completing_a_task_without_rework():
    events = [*GOOD_EVENTS[:6], ev(7, "run.started", A, 4)]
    assert rules(events=events, history=GOOD_HISTORY[:4]) == [check.COMPLETION]


def test_it_catches_a_decision_applied_twice_in_the_log():
    events = [*GOOD_EVENTS, ev(10, "inbox.item_decided", itemId=9, decision="drop")]
    assert rules(events=events) == [check.DECISION]


def test_it_catches_two_acknowledged_decisions_of_one_item():
    history = [*GOOD_HISTORY, call("decide", "ok", 8.2, run=None, item=9, decision="drop")]
    assert rules(history=history) == [check.DECISION]


def test_it_catches_an_acknowledged_decision_missing_from_the_log():
    events = [e for e in GOOD_EVENTS if e.get("payload", {}).get("decision") != "accept"]
    assert rules(events=events) == [check.DECISION]


def test_it_catches_an_epoch_gap_in_a_tasks_events():
    # B's claim at epoch 4: the expiry to 2 and a claim to 3 are missing from the log.
    events = [*GOOD_EVENTS[:4], ev(5, "run.started", B, 4), ev(6, "run.completed", B, 4)]
    assert rules(events=events, history=GOOD_HISTORY[:4]) == [check.ORDER]


def test_it_catches_an_event_that_never_got_a_position():
    events = [*GOOD_EVENTS[:-1], {**GOOD_EVENTS[-1], "position": None}]
    assert check.ORDER in rules(events=events)


def test_it_catches_events_of_a_task_out_of_order():
    # The completion positioned before the claim it completes.
    events = [*GOOD_EVENTS[:4], {**GOOD_EVENTS[5], "position": 5}, {**GOOD_EVENTS[4], "position": 6}]
    assert rules(events=events, history=GOOD_HISTORY[:4])[0] == check.STALE_WRITE


def test_it_prints_the_first_violation_with_the_events_around_it():
    runs = [run_row(A, "00", "09", "05", 1), run_row(B, "04", "06", "10", 3)]
    text = check.check(GOOD_EVENTS, runs, GOOD_HISTORY)[0].render()
    assert text.startswith("VIOLATION overlapping_leases: task 7: run run-b started")
    assert '"type": "run.started"' in text and '"type": "run.stale"' in text
