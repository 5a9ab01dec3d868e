"""The web triage's writes over several issues or apps: "make a task" from an issue, the
resolution its accepted task brings, asking the reporter for detail, and bulk close.

The resolution does not touch boards/: `issues/relay.py` hands every freshly positioned
`inbox.item_decided` event to `issues_resolve_for_accept`, inside the relay's transaction.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from accounts.models import User, Workspace
from boards import clock
from boards import limits as board_limits
from boards.models import Board, InboxItem, Task
from boards.services import task_create
from issues import limits
from issues.access import access_issue
from issues.models import FINAL_STATUSES, Issue, IssueLink, IssueStatus, LinkTarget
from issues.services.common import emit_issue
from issues.services.triage import issue_reply, issue_resolve, issue_set_status
from weft.errors import WeftError
from weft.hints import fix


@dataclass(frozen=True)
class TaskMade:
    issue: Issue
    task: Task
    link: IssueLink


def _closed(issue: Issue) -> WeftError:
    return WeftError(
        "conflict",
        f"issue {issue.pk} is {issue.status}: a closed thread gets no new task",
        details={"issueId": issue.pk, "status": issue.status},
        fix=fix("get_my_work"),
    )


def task_description(issue: Issue) -> str:
    """The new task's description: where it comes from, then the issue's (redacted) body."""
    head = (
        f"From issue #{issue.pk} ({issue.get_kind_display()}, {issue.get_environment_class_display()}).\n\n"
    )
    return (head + issue.body)[: board_limits.DESCRIPTION]


def issue_task_make(*, issue: Issue, board: Board, user: User, title: str = "") -> TaskMade:
    """A task on `board` for the issue, linked to it (REFERS_TO); the issue goes in_progress.

    The task needs review, so its completion comes back to the Inbox; accepting it there
    resolves the issue (issues_resolve_for_accept). One transaction: task, link, status, events.
    """
    with transaction.atomic():
        issue = Issue.objects.select_for_update().get(pk=issue.pk)
        if issue.status in FINAL_STATUSES:
            raise _closed(issue)
        task = task_create(
            workspace=issue.workspace,
            board=board,
            title=(title.strip() or issue.title)[: board_limits.TITLE],
            description=task_description(issue),
            review_required=True,
            by_user=user,
        ).task
        now = clock.db_now()
        link = IssueLink.objects.create(
            workspace_id=issue.workspace_id,
            issue=issue,
            target_type=LinkTarget.TASK,
            task=task,
            created_at=now,
        )
        issue.status = IssueStatus.IN_PROGRESS
        issue.updated_at = issue.maintainer_activity_at = now
        issue.save(update_fields=["status", "updated_at", "maintainer_activity_at"])
        emit_issue(issue, "issue.updated", status=issue.status, fields=["status", "links"], taskId=task.pk)
    return TaskMade(issue=issue, task=task, link=link)


def accepted_resolution(task_id: int, outcome: str) -> str:
    """What the reporter reads when the task made from its issue was accepted."""
    head = f"Task #{task_id} was accepted."
    text = f"{head} {outcome.strip()}" if outcome.strip() else head
    return text[: limits.RESOLUTION]


def issues_resolve_for_accept(*, workspace_id: int, item_id: Any, task_id: Any) -> list[Issue]:
    """Resolve the in-progress issues that refer to an accepted task, with the run's report outcome.

    Only issues in_progress resolve (what "make a task" sets): a reporter's own link to a task,
    on an issue nobody turned into work, does not close the issue behind the maintainers' back.
    """
    item = InboxItem.objects.select_related("report").filter(pk=item_id, workspace_id=workspace_id).first()
    if item is None or item.task_id != task_id:
        return []
    outcome = item.report.outcome if item.report is not None else ""
    waiting = Issue.objects.filter(
        workspace_id=workspace_id,
        status=IssueStatus.IN_PROGRESS,
        links__target_type=LinkTarget.TASK,
        links__task_id=task_id,
    ).distinct()
    resolved = []
    for issue in waiting.order_by("pk"):
        try:
            resolved.append(issue_resolve(issue=issue, resolution=accepted_resolution(task_id, outcome)))
        except WeftError as error:
            if error.code != "pii_detected":
                raise
            # A workspace that takes no personal data: resolve without quoting the outcome.
            resolved.append(issue_resolve(issue=issue, resolution=accepted_resolution(task_id, "")))
    return resolved


def issues_close(*, workspace: Workspace, issue_ids: Iterable[Any]) -> list[Issue]:
    """Close several issues of the workspace at once; all or none (a foreign id is not_found).

    An issue already resolved, closed or a duplicate keeps its outcome.
    """
    with transaction.atomic():
        found = [access_issue(workspace, ident) for ident in dict.fromkeys(issue_ids)]
        return [
            issue_set_status(issue=issue, status=IssueStatus.CLOSED)
            for issue in found
            if issue.status not in FINAL_STATUSES
        ]


def issue_ask_for_detail(*, issue: Issue, user: User, body: str) -> Issue:
    """A maintainer's question on the thread, and the issue waits for the reporter (one transaction)."""
    with transaction.atomic():
        issue_reply(issue=issue, user=user, body=body)
        return issue_set_status(issue=issue, status=IssueStatus.WAITING_INPUT)
