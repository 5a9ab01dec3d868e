"""A task's history in words: every event type a task's history can hold has a sentence."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from boards import history_words as words
from boards.history_words import Facts, sentence
from weft import event_types

ANA = Facts(who="Ana")
AGENT = Facts(who="Claude Code")


def test_it_has_a_sentence_for_every_type_a_task_history_can_hold():
    missing = sorted(t for t in words.TASK_HISTORY_TYPES if t not in words.SENTENCES)
    assert missing == []


def test_it_has_no_sentence_for_a_type_the_log_does_not_carry():
    assert sorted(set(words.SENTENCES) - event_types.TYPES) == []


@pytest.mark.parametrize("event_type", sorted(words.TASK_HISTORY_TYPES))
def test_it_says_every_type_without_its_code(event_type):
    text = sentence(event_type, {"decision": "accept", "fields": ["title"]}, AGENT)
    assert text and event_type not in text and "epoch" not in text and text != "Something changed"


@pytest.mark.parametrize(
    ("event_type", "payload", "facts", "expected"),
    [
        ("run.started", {}, AGENT, "Claude Code started the task"),
        ("run.heartbeat", {"note": "Half done"}, AGENT, "Claude Code reported progress: Half done"),
        ("run.heartbeat", {"note": ""}, AGENT, "Claude Code reported progress"),
        ("inbox.item_decided", {"decision": "accept"}, ANA, "Ana accepted the result"),
        (
            "inbox.item_decided",
            {"decision": "rework"},
            Facts(who="Ana", words="Add the date"),
            "Ana asked for rework: Add the date",
        ),
        (
            "inbox.item_decided",
            {"decision": "later"},
            Facts(who="Ana", words="14:00"),
            "Ana snoozed it until 14:00",
        ),
        ("inbox.item_decided", {"decision": "drop"}, ANA, "Ana dropped it"),
        ("run.stale", {}, Facts(), "The lease expired"),
        ("question.answered", {}, Facts(who="Ana", words="Postgres"), "Ana answered: Postgres"),
        ("task.commented", {}, ANA, "Ana commented"),
        ("task.moved", {"from": "todo", "to": "doing"}, ANA, "Ana moved it from Todo to Doing"),
        (
            "task.updated",
            {"fields": ["title", "due_at", "priority"]},
            ANA,
            "Ana changed the title, due at and priority",
        ),
        ("run.completed", {"review": True}, AGENT, "Claude Code finished and sent the result for review"),
        ("inbox.item_reopened", {}, ANA, "Ana undid the drop; it waits in the Inbox again"),
    ],
)
def test_it_says_who_did_what(event_type, payload, facts, expected):
    assert sentence(event_type, payload, facts) == expected


def test_it_says_someone_when_nobody_is_known():
    assert sentence("task.trashed", {}, Facts()) == "Someone moved it to the Trash"


def test_it_quotes_a_long_note_on_one_line_cut_at_its_edge():
    assert words.quote("a\nb") == "a b"
    assert words.quote("x" * words.QUOTE) == "x" * words.QUOTE
    assert words.quote("x" * (words.QUOTE + 1)) == "x" * (words.QUOTE - 1) + "…"


def test_it_says_when_a_snooze_ends():
    now = datetime(2026, 12, 4, 9, 0, tzinfo=UTC)
    assert words.until(datetime(2026, 12, 4, 14, 0, tzinfo=UTC), now) == "14:00"
    assert words.until(datetime(2026, 12, 5, 14, 0, tzinfo=UTC), now) == "Dec 5, 14:00"
