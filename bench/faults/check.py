"""The history checker: Weft's claim guarantee as invariants over a run's records (pure).

Three records of one fault run, each a list of dicts (JSONL files on disk):

- **events** — the event log as the database holds it: `position`, `type`, `entity_type`,
  `entity_id`, `payload`, `epoch` (dumped from `weft_event` at the end of the run);
- **runs** — the runs table: `run_id`, `task_id`, `epoch`, `state`, `started_at`, `ended_at`,
  `lease_expires_at` (database times, ISO 8601);
- **history** — what every client sent and was answered: `agent`, `op` (start, heartbeat,
  complete, release, decide), `task`, `run`, `note`, `item`, `decision`, `sent`, `recv`,
  `outcome` (`ok` or the error code, or `transport` when no answer came).

`check()` returns every violation of the five invariants (docs/guarantees.md), each with the
events of its task around it; `python bench/faults/check.py RUN_DIR` prints the first one and
exits 1, or prints the counts and exits 0.
"""

from __future__ import annotations

import itertools
import json
import sys
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

Record = dict[str, Any]

OVERLAP = "overlapping_leases"
STALE_WRITE = "stale_write"
COMPLETION = "completion_not_once"
DECISION = "decision_applied_twice"
ORDER = "task_events_out_of_order"
RULES = (OVERLAP, STALE_WRITE, COMPLETION, DECISION, ORDER)

# Lease-guarded writes: each must come from the task's live run at its current epoch.
GUARDED = ("run.heartbeat", "run.input_requested", "run.completed", "run.released", "run.resumed")
ENDING = ("run.completed", "run.released", "run.stale")
# Ends that bump the task's epoch (fencing the old token); a completion keeps it.
BUMPING = ("run.released", "run.stale")
# A person's decisions that end an Inbox item ("later" only snoozes it and may come again).
FINAL_DECISIONS = ("accept", "rework", "drop", "answered")
WRITE_OPS = ("heartbeat", "complete", "release")
AROUND = 3


@dataclass(frozen=True)
class Violation:
    rule: str
    message: str
    around: list[Record] = field(default_factory=list)

    def render(self) -> str:
        lines = [f"VIOLATION {self.rule}: {self.message}"]
        lines += [f"    {json.dumps(event, sort_keys=True, default=str)}" for event in self.around]
        return "\n".join(lines)


def task_of(event: Record) -> int | None:
    """The task an event is about: its entity for task events, its payload's taskId otherwise."""
    if event.get("entity_type") == "task":
        return int(event["entity_id"])
    task = (event.get("payload") or {}).get("taskId")
    return None if task is None else int(task)


def _by_task(events: Sequence[Record]) -> dict[int, list[Record]]:
    tasks: dict[int, list[Record]] = defaultdict(list)
    for event in sorted(events, key=_position):
        task = task_of(event)
        if task is not None:
            tasks[task].append(event)
    return tasks


def _position(event: Record) -> int:
    position = event.get("position")
    return -1 if position is None else int(position)


def _around(events: Sequence[Record], index: int) -> list[Record]:
    return list(events[max(0, index - AROUND) : index + AROUND + 1])


def _at(when: str | None) -> datetime | None:
    return None if when is None else datetime.fromisoformat(when)


def check_overlap(runs: Sequence[Record], events: Sequence[Record]) -> list[Violation]:
    """No two runs of one task hold a live lease at the same database time.

    A run holds from `started_at` until the first of its end and its lease expiry.
    """
    tasks: dict[int, list[Record]] = defaultdict(list)
    for run in runs:
        tasks[int(run["task_id"])].append(run)
    by_task = _by_task(events)
    found: list[Violation] = []
    for task, held in tasks.items():
        held.sort(key=lambda r: (_at(r["started_at"]), r["run_id"]))
        for before, after in itertools.pairwise(held):
            ends = [t for t in (_at(before.get("ended_at")), _at(before.get("lease_expires_at"))) if t]
            end = min(ends) if ends else None
            start = _at(after["started_at"])
            if start is not None and (end is None or start < end):
                message = (
                    f"task {task}: run {after['run_id']} started at {after['started_at']} while run "
                    f"{before['run_id']} held the lease until {end.isoformat() if end else 'forever'}"
                )
                found.append(Violation(OVERLAP, message, _run_events(by_task.get(task, []), after)))
    return found


def _run_events(events: Sequence[Record], run: Record) -> list[Record]:
    for index, event in enumerate(events):
        if event.get("type") == "run.started" and str(event["payload"].get("runId")) == str(run["run_id"]):
            return _around(events, index)
    return list(events[-2 * AROUND :])


@dataclass
class _Lease:
    """The task's state as its log has told it so far."""

    epoch: int | None = None
    run: str | None = None
    ended: set[str] = field(default_factory=set)
    completed: bool = False


def check_log(events: Sequence[Record]) -> list[Violation]:
    """Each task's events, in position order, tell one consistent lease story (rules 2, 3, 5)."""
    found: list[Violation] = []
    unpositioned = [e for e in events if e.get("position") is None]
    if unpositioned:
        found.append(Violation(ORDER, f"{len(unpositioned)} events never got a position", unpositioned[:3]))
    for task, history in _by_task(events).items():
        state = _Lease()
        for index, event in enumerate(history):
            problem = _step(state, event)
            if problem is not None:
                rule, message = problem
                found.append(Violation(rule, f"task {task}: {message}", _around(history, index)))
                break  # the rest of this task's story follows from a broken one
    return found


def _step(state: _Lease, event: Record) -> tuple[str, str] | None:
    """Apply one event to the task's state; the rule it breaks and why, if it breaks one."""
    kind = event["type"]
    run = str((event.get("payload") or {}).get("runId", ""))
    epoch = event.get("epoch")
    where = f"{kind} at position {event.get('position')} (epoch {epoch})"
    if kind == "task.created":
        state.epoch = 0 if state.epoch is None else state.epoch
        return None
    if kind == "run.started":
        return _started(state, run, epoch, where)
    if kind == "inbox.item_decided" and (event.get("payload") or {}).get("decision") == "rework":
        state.completed = False
    if kind not in GUARDED and kind != "run.stale":
        return None
    if run in state.ended:
        return (STALE_WRITE, f"{where} on run {run}, which had already ended")
    if run != state.run:
        return (STALE_WRITE, f"{where} on run {run}, but the task's lease is run {state.run}")
    expected = (state.epoch or 0) + 1 if kind in BUMPING else state.epoch
    if epoch != expected:
        return (STALE_WRITE if kind in GUARDED else ORDER, f"{where}: the task's epoch was {state.epoch}")
    if kind in ENDING:
        return _ended(state, kind, run, epoch, where)
    return None


def _started(state: _Lease, run: str, epoch: Any, where: str) -> tuple[str, str] | None:
    if state.run is not None:
        return (OVERLAP, f"{where} for run {run} while run {state.run} was live in the log")
    if state.completed:
        return (COMPLETION, f"{where}: the task was already completed and no rework came between")
    if state.epoch is not None and epoch != state.epoch + 1:
        return (ORDER, f"{where}: the task's epoch was {state.epoch}, a claim must make it {state.epoch + 1}")
    state.epoch, state.run = epoch, run
    return None


def _ended(state: _Lease, kind: str, run: str, epoch: Any, where: str) -> tuple[str, str] | None:
    state.ended.add(run)
    state.run = None
    state.epoch = epoch
    state.completed = kind == "run.completed"
    return None


def check_history(history: Sequence[Record], events: Sequence[Record]) -> list[Violation]:
    """What clients were told agrees with the log (rules 2, 3 and 4)."""
    return _stale_after_loss(history) + _completions(history, events) + _decisions(history, events)


def _stale_after_loss(history: Sequence[Record]) -> list[Violation]:
    """Once a run was answered lease_lost, no write of it sent later may succeed."""
    lost: dict[str, float] = {}
    found: list[Violation] = []
    for call in sorted(history, key=lambda c: c["sent"]):
        if call["op"] not in WRITE_OPS or not call.get("run"):
            continue
        run = str(call["run"])
        if call["outcome"] == "lease_lost":
            lost.setdefault(run, call["recv"])
        elif call["outcome"] == "ok" and run in lost and call["sent"] > lost[run]:
            message = f"{call['agent']}'s {call['op']} of run {run} succeeded after its lease was lost"
            found.append(Violation(STALE_WRITE, message, [call]))
    return found


def _completions(history: Sequence[Record], events: Sequence[Record]) -> list[Violation]:
    logged: dict[str, list[Record]] = defaultdict(list)
    for event in events:
        if event["type"] == "run.completed":
            logged[str(event["payload"]["runId"])].append(event)
    found = [
        Violation(COMPLETION, f"run {run} is completed {len(copies)} times in the log", copies)
        for run, copies in logged.items()
        if len(copies) > 1
    ]
    for call in history:
        if call["op"] == "complete" and call["outcome"] == "ok" and not logged.get(str(call["run"])):
            message = (
                f"{call['agent']}'s completion of run {call['run']} was acknowledged but is not in the log"
            )
            found.append(Violation(COMPLETION, message, [call]))
    return found


def _decisions(history: Sequence[Record], events: Sequence[Record]) -> list[Violation]:
    logged: dict[str, list[Record]] = defaultdict(list)
    for event in events:
        payload = event.get("payload") or {}
        decided = event["type"] == "inbox.item_decided" and payload.get("decision") in FINAL_DECISIONS
        if decided or event["type"] == "question.answered":
            logged[str(payload["itemId"])].append(event)
    found = [
        Violation(DECISION, f"inbox item {item} was decided {len(copies)} times", copies)
        for item, copies in logged.items()
        if len(copies) > 1
    ]
    acknowledged: dict[str, list[Record]] = defaultdict(list)
    for call in history:
        if call["op"] == "decide" and call["outcome"] == "ok" and call.get("decision") in FINAL_DECISIONS:
            acknowledged[str(call["item"])].append(call)
    for item, calls in acknowledged.items():
        if len(calls) > 1:
            found.append(
                Violation(DECISION, f"inbox item {item}: {len(calls)} decisions were acknowledged", calls)
            )
        elif not logged.get(item):
            found.append(
                Violation(DECISION, f"inbox item {item}: the acknowledged decision is not in the log", calls)
            )
    return found


def check(events: Sequence[Record], runs: Sequence[Record], history: Sequence[Record]) -> list[Violation]:
    """Every violation of the five invariants, log first, then the leases, then the clients."""
    return check_log(events) + check_overlap(runs, events) + check_history(history, events)


def summary(events: Sequence[Record], runs: Sequence[Record], history: Sequence[Record]) -> Record:
    """The counts a results table reports."""
    outcomes: dict[str, int] = defaultdict(int)
    for call in history:
        outcomes[f"{call['op']}:{call['outcome']}"] += 1
    return {
        "events": len(events),
        "runs": len(runs),
        "claims": sum(1 for e in events if e["type"] == "run.started"),
        "completions": sum(1 for e in events if e["type"] == "run.completed"),
        "expired": sum(1 for e in events if e["type"] == "run.stale"),
        "calls": len(history),
        "outcomes": dict(sorted(outcomes.items())),
    }


def read_jsonl(paths: Iterable[Path]) -> list[Record]:
    records: list[Record] = []
    for path in paths:
        with path.open() as lines:
            # A killed agent may leave half a line at the end of its file: that call has no answer.
            records += [json.loads(line) for line in lines if line.strip().endswith("}")]
    return records


def load(run_dir: Path) -> tuple[list[Record], list[Record], list[Record]]:
    events = read_jsonl([run_dir / "events.jsonl"])
    runs = read_jsonl([run_dir / "runs.jsonl"])
    history = read_jsonl(sorted((run_dir / "history").glob("*.jsonl")))
    return events, runs, history


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: check.py RUN_DIR (events.jsonl, runs.jsonl, history/*.jsonl)", file=sys.stderr)
        return 2
    events, runs, history = load(Path(argv[0]))
    violations = check(events, runs, history)
    print(json.dumps(summary(events, runs, history), sort_keys=True))
    if violations:
        print(violations[0].render())
        print(f"{len(violations)} violations in all")
        return 1
    print("no violations")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
