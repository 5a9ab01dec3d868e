"""PURE: a task's history in people's words: event type + payload + who did it → one sentence.

The selector (boards/selectors/tasks.py) finds who did each thing (the agent that held the run,
the person who decided, answered or commented) and the words they left; this module only puts
them into a sentence, so every type a task's history can hold is tested here without a database.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from weft import event_types

# The families of events that are about a task, its runs, its Inbox items, questions and approvals.
FAMILIES = ("task", "run", "inbox", "question", "approval")
TASK_HISTORY_TYPES: frozenset[str] = frozenset(t for t in event_types.TYPES if t.split(".", 1)[0] in FAMILIES)

COLUMNS = {
    "backlog": "Backlog",
    "todo": "Todo",
    "doing": "Doing",
    "done": "Done",
    "dropped": "Dropped",
    "trash": "Trash",
}
# The longest note quoted in a sentence; the task page shows the whole text in the run timeline.
QUOTE = 200


@dataclass(frozen=True)
class Facts:
    """What the log does not say: who did it, and the words they left (a note, answer, comment)."""

    who: str = ""
    words: str = ""


def quote(text: str) -> str:
    """A note as a sentence quotes it: on one line, cut at QUOTE characters."""
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= QUOTE else flat[: QUOTE - 1].rstrip() + "…"


def until(at: datetime, now: datetime) -> str:
    """When a snooze ends: `14:00` today, else `Dec 5, 14:00`."""
    return at.strftime("%H:%M") if at.date() == now.date() else f"{at:%b} {at.day}, {at:%H:%M}"


def _with(text: str, words: str) -> str:
    said = quote(words)
    return f"{text}: {said}" if said else text


def _column(payload: Mapping[str, Any], key: str) -> str:
    value = str(payload.get(key) or "")
    return COLUMNS.get(value, value or "its column")


def _fields(payload: Mapping[str, Any]) -> str:
    names = [str(f).replace("_", " ") for f in payload.get("fields") or []]
    if not names:
        return "the task"
    return "the " + (names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1])


def _completed(p: Mapping[str, Any], f: Facts) -> str:
    if p.get("review"):
        return f"{f.who} finished and sent the result for review"
    return f"{f.who} finished the task"


def _created_item(p: Mapping[str, Any], f: Facts) -> str:
    if p.get("kind") == "question":
        return "The question waits for an answer in the Inbox"
    return "The result waits for review in the Inbox"


DECIDED: dict[str, Callable[[Facts], str]] = {
    "accept": lambda f: f"{f.who} accepted the result",
    "rework": lambda f: _with(f"{f.who} asked for rework", f.words),
    "later": lambda f: f"{f.who} snoozed it until {f.words}" if f.words else f"{f.who} snoozed it",
    "drop": lambda f: f"{f.who} dropped it",
    "answered": lambda f: f"{f.who} answered",
    "moved": lambda f: f"{f.who} decided the review by moving the task on the board",
}


def _decided(p: Mapping[str, Any], f: Facts) -> str:
    say = DECIDED.get(str(p.get("decision") or ""))
    return say(f) if say else f"{f.who} decided"


SENTENCES: dict[str, Callable[[Mapping[str, Any], Facts], str]] = {
    "task.created": lambda p, f: f"{f.who} created the task",
    "task.updated": lambda p, f: f"{f.who} changed {_fields(p)}",
    "task.moved": lambda p, f: f"{f.who} moved it from {_column(p, 'from')} to {_column(p, 'to')}",
    "task.trashed": lambda p, f: f"{f.who} moved it to the Trash",
    "task.restored": lambda p, f: f"{f.who} restored it to {_column(p, 'to')}",
    "task.purged": lambda p, f: "It was deleted from the Trash for good",
    "task.commented": lambda p, f: f"{f.who} commented",
    "run.started": lambda p, f: (
        _with(f"{f.who} started the approved next step", f.words) if f.words else f"{f.who} started the task"
    ),
    "run.resumed": lambda p, f: f"{f.who} picked the task up again",
    "run.heartbeat": lambda p, f: _with(f"{f.who} reported progress", str(p.get("note") or "")),
    "run.input_requested": lambda p, f: _with(f"{f.who} asked a question", f.words),
    "run.completed": _completed,
    "run.released": lambda p, f: _with(f"{f.who} let go of the task", str(p.get("reason") or "")),
    "run.stale": lambda p, f: "The lease expired",
    "inbox.item_created": _created_item,
    "inbox.item_decided": _decided,
    "inbox.item_reopened": lambda p, f: f"{f.who} undid the drop; it waits in the Inbox again",
    "question.answered": lambda p, f: _with(f"{f.who} answered", f.words),
    "question.delivered": lambda p, f: f"{f.who} received the answer",
    "approval.delivered": lambda p, f: f"{f.who} received the approval for the next step",
}


def sentence(event_type: str, payload: Mapping[str, Any], facts: Facts) -> str:
    """One history entry in words; `facts.who` defaults to "Someone" where nobody is known."""
    who = facts.who or "Someone"
    say = SENTENCES.get(event_type)
    if say is None:
        return "Something changed"
    return say(payload, Facts(who=who, words=facts.words))
