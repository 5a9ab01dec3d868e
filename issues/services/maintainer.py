"""A maintainer's agent's triage (triage_issue, over MCP and REST): the seat rule, then each action
through the web triage's own writes.

The agent acts as its connection's user, who must hold an owner's or admin's seat in the
receiving workspace (`require_maintainer`), as a person must on the triage pages. Accepting the
task an issue becomes stays a person's act in the Inbox.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction

from accounts.models import AgentConnection
from boards import limits as board_limits
from boards.access import access_board
from boards.services import board_default
from issues.access import access_issue, access_issue_for_maintainer
from issues.models import IssueStatus
from issues.results import IssueTriaged
from issues.services.common import checked_text
from issues.services.tasks import issue_ask_for_detail, issue_task_make
from issues.services.triage import issue_mark_duplicate, issue_reply, issue_resolve, issue_set_status
from weft.errors import invalid_argument
from weft.hints import fix

ACTIONS = ("reply", "ask", "resolve", "close", "duplicate", "make_task", "status")
# What each action needs besides the issue id (the tool's argument names).
NEEDS = {"reply": "body", "ask": "body", "resolve": "body", "duplicate": "duplicateOf", "status": "status"}


@dataclass(frozen=True)
class Triage:
    """One triage_issue call's arguments, as the tool names them."""

    action: str
    body: str | None = None
    duplicate_of: int | None = None
    board_id: int | None = None
    status: str | None = None

    def given(self, name: str) -> Any:
        return {"body": self.body, "duplicateOf": self.duplicate_of, "status": self.status}[name]


def _missing_argument(issue_id: int, call: Triage) -> None:
    needed = NEEDS.get(call.action)
    if needed is None or call.given(needed) not in (None, ""):
        return
    # The server cannot know the text or the status wanted: the read that shows the issue, or the
    # list whose ids a duplicate may name.
    read = fix("list_issues") if needed == "duplicateOf" else fix("get_issue_status", {"id": issue_id})
    raise invalid_argument(needed, f"action {call.action!r} needs {needed}", fix_hint=read)


def issue_triage(*, connection: AgentConnection, issue_id: Any, call: Triage) -> IssueTriaged:
    """Run one triage action on an issue the connection's workspace received; one transaction."""
    if call.action not in ACTIONS:
        raise invalid_argument("action", f"one of {', '.join(ACTIONS)}", fix_hint=fix("list_issues"))
    found = access_issue_for_maintainer(connection, issue_id)
    _missing_argument(found.pk, call)
    user, body = connection.user, call.body or ""
    with transaction.atomic():
        if call.action == "reply":
            return IssueTriaged(issue=issue_reply(issue=found, user=user, body=body).issue, action="reply")
        if call.action == "ask":
            return IssueTriaged(issue=issue_ask_for_detail(issue=found, user=user, body=body), action="ask")
        if call.action == "resolve":
            return IssueTriaged(issue=issue_resolve(issue=found, resolution=body), action=call.action)
        if call.action == "duplicate":
            original = access_issue(connection.workspace_id, call.duplicate_of)
            return IssueTriaged(issue=issue_mark_duplicate(issue=found, of=original), action=call.action)
        if call.action == "make_task":
            return _task(connection, found, call)
        status = IssueStatus.CLOSED if call.action == "close" else str(call.status)
        resolution = call.body if call.action == "close" else None
        changed = issue_set_status(issue=found, status=status, resolution=resolution)
        return IssueTriaged(issue=changed, action=call.action)


def _task(connection: AgentConnection, issue: Any, call: Triage) -> IssueTriaged:
    workspace = connection.workspace
    # The task's title: refused past the board's limit, never cut (issue_task_make cuts the web's).
    title = checked_text("body", call.body, board_limits.TITLE, required=False)
    board = access_board(workspace, call.board_id) if call.board_id is not None else None
    made = issue_task_make(
        issue=issue,
        board=board or board_default(workspace=workspace),
        user=connection.user,
        title=title,
    )
    return IssueTriaged(issue=made.issue, action=call.action, task_id=made.task.pk)
