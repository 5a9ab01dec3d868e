"""PURE: the event types and entity types the log carries, the ones a filter may name.

A filter naming a type that no write emits would match nothing, ever, in silence (a typo such
as `task.create`), so subscriptions and the stream refuse it. tests/weft/test_events_doc.py
keeps these sets equal to what the code emits and docs/events.md documents.
"""

from __future__ import annotations

TYPES: frozenset[str] = frozenset(
    {
        "workspace.created",
        "workspace.plan_changed",
        "workspace.suspended",
        "workspace.suspension_lifted",
        "seat.added",
        "seat.role_changed",
        "seat.removed",
        "invitation.created",
        "invitation.accepted",
        "invitation.revoked",
        "connection.created",
        "connection.updated",
        "connection.revoked",
        "board.created",
        "board.renamed",
        "board.archived",
        "board.restored",
        "task.created",
        "task.updated",
        "task.moved",
        "task.trashed",
        "task.restored",
        "task.purged",
        "task.commented",
        "run.started",
        "run.heartbeat",
        "run.input_requested",
        "run.resumed",
        "run.completed",
        "run.released",
        "run.stale",
        "inbox.item_created",
        "inbox.item_decided",
        "inbox.item_reopened",
        "question.answered",
        "question.delivered",
        "approval.delivered",
        "subscription.created",
        "subscription.disabled",
        "subscription.deleted",
        "issue.created",
        "issue.updated",
        "issue.message_created",
        "issue.resolved",
        "issue_intake.updated",
    }
)

ENTITY_TYPES: frozenset[str] = frozenset(
    {
        "workspace",
        "seat",
        "invitation",
        "connection",
        "board",
        "task",
        "run",
        "inbox_item",
        "question",
        "approval",
        "subscription",
        "issue",
    }
)


def unknown_type(name: str) -> str | None:
    """Why `name` is not an event type a filter may name; None when it is one."""
    if name in TYPES:
        return None
    family = name.split(".", 1)[0]
    known = sorted(t for t in TYPES if t.split(".", 1)[0] == family)
    return f"{name!r} is not an event type" + (f" (the {family} types: {', '.join(known)})" if known else "")


def unknown_entity_type(name: str) -> str | None:
    """Why `name` is not an entity type events carry; None when it is one."""
    if name in ENTITY_TYPES:
        return None
    return f"{name!r} is not an entity type (one of {', '.join(sorted(ENTITY_TYPES))})"
