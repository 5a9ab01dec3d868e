"""The reporter's side of an issue's thread: its messages, and its reads (which track news).

Reading is a write here, as get_my_work is for the board: the reporting connection's read
moves `reporter_read_at`, which `news_for_connection` compares with maintainer activity.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from accounts.models import AgentConnection
from boards import clock
from issues import limits
from issues.access import (
    access_issue_by_guest_token,
    access_issue_for_reporter,
    issue_pk,
    reporter_scope,
    token_again,
)
from issues.models import Issue, IssueMessage, IssueStatus
from issues.results import IssueThread, MessageAdded
from issues.services.common import call_hint, checked_text, emit_issue, provenance, redacted
from weft.errors import WeftError
from weft.hints import fix, wait

TOOL = "add_issue_message"


def _reporter_only(issue: Issue) -> WeftError:
    return WeftError(
        "forbidden",
        f"only agents of the workspace that filed issue {issue.pk} write on its reporter side;"
        " maintainers answer in the web triage",
        details={"issueId": issue.pk},
        fix=wait(f"the maintainers answer issue {issue.pk}", "get_issue_status", {"id": issue.pk}),
    )


def issue_message_add(
    *,
    connection: AgentConnection,
    issue_id: Any,
    body: str,
    reporter_git_sha: str | None = None,
    reporter_app_version: str | None = None,
) -> MessageAdded:
    """A reporter's message on its issue's thread; without a build it is kept, flagged."""
    args = {"id": issue_id, "body": body, "reporter_git_sha": reporter_git_sha}
    args["reporter_app_version"] = reporter_app_version
    text = checked_text("body", body, limits.MESSAGE)
    sha, version, _ = provenance(connection, reporter_git_sha, reporter_app_version)
    with transaction.atomic():
        issue = access_issue_for_reporter(connection.workspace, issue_id)
        if issue.reporter_workspace_id != connection.workspace_id:
            raise _reporter_only(issue)
        issue = Issue.objects.select_for_update().get(pk=issue.pk)
        now = clock.db_now()
        texts, kinds = redacted(
            issue.workspace_id,
            {"body": text},
            corrected=lambda t: call_hint(TOOL, {**args, **t}, otherwise=fix("get_my_work")),
        )
        message = IssueMessage.objects.create(
            workspace_id=issue.workspace_id,
            issue=issue,
            side=IssueMessage.REPORTER,
            body=texts["body"],
            reporter_git_sha=sha,
            reporter_app_version=version,
            build_missing=not (sha or version),
            author_connection=connection,
            redacted_kinds=kinds,
            created_at=now,
        )
        changed = ["updated_at"]
        if issue.status == IssueStatus.WAITING_INPUT:
            # The reporter answered the maintainers' question: back to them.
            issue.status = IssueStatus.TRIAGED
            changed.append("status")
        issue.updated_at = now
        issue.save(update_fields=changed)
        emit_issue(issue, "issue.message_created", messageId=message.pk, side=message.side)
        if "status" in changed:
            emit_issue(issue, "issue.updated", status=issue.status, fields=["status"])
    return MessageAdded(issue=issue, message=message)


def issue_status_read(
    *, connection: AgentConnection, issue_id: Any, guest_token: str | None = None
) -> IssueThread:
    """An issue's status and thread, for its reporter (or a guest token's holder)."""
    with transaction.atomic():
        now = clock.db_now()
        if guest_token:
            readable = Issue.objects.filter(reporter_scope(connection.workspace), pk=issue_pk(issue_id))
            again = token_again(issue_id, readable=readable.exists())
            issue = access_issue_by_guest_token(guest_token, issue_id, now=now, again=again)
        else:
            issue = access_issue_for_reporter(connection.workspace, issue_id)
        if issue.reporter_connection_id == connection.pk:
            Issue.objects.filter(pk=issue.pk).update(reporter_read_at=now)
        messages = list(issue.messages.order_by("created_at", "pk"))
    return IssueThread(issue=issue, messages=messages, guest_token=guest_token)
