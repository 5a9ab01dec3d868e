"""PURE: quiet hours, and what a push message says."""

from __future__ import annotations

from datetime import time


def in_quiet_hours(local: time, start: time | None, end: time | None) -> bool:
    """Whether `local` falls in [start, end); a range past midnight (22:00–07:00) wraps."""
    if start is None or end is None or start == end:
        return False
    if start < end:
        return start <= local < end
    return local >= start or local < end


def message_text(*, kind: str, task_title: str, question: str | None, workspace: str) -> tuple[str, str]:
    """The notification's title and body for an Inbox item."""
    if kind == "question" and question:
        return f"Question in {workspace}"[:200], f"{task_title}: {question}"[:500]
    return f"Review waiting in {workspace}"[:200], task_title[:500]
