"""Typed results of the issue services and selectors: each carries its hint, payload and summary."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from issues.models import FINAL_STATUSES, Issue, IssueMessage, IssueStatus
from weft.hints import DONE, Hint, next_, wait


def iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def issue_payload(issue: Issue) -> dict[str, Any]:
    return {
        "id": issue.pk,
        "kind": issue.kind,
        "title": issue.title,
        "status": issue.status,
        "resolution": issue.resolution or None,
        "environmentClass": issue.environment_class,
        "reporterGitSha": issue.reporter_git_sha or None,
        "reporterAppVersion": issue.reporter_app_version or None,
        "appVersionFromClient": issue.app_version_from_client,
        "upstreamUrl": issue.upstream_url or None,
        "duplicateOf": issue.duplicate_of_id,
        "redactedKinds": list(issue.redacted_kinds),
        "createdAt": iso(issue.created_at),
        "updatedAt": iso(issue.updated_at),
    }


def message_payload(message: IssueMessage) -> dict[str, Any]:
    return {
        "id": message.pk,
        "side": message.side,
        "body": message.body,
        "reporterGitSha": message.reporter_git_sha or None,
        "reporterAppVersion": message.reporter_app_version or None,
        "buildMissing": message.build_missing,
        "createdAt": iso(message.created_at),
    }


def check_back(issue: Issue, guest_token: str | None = None) -> Hint:
    """While maintainers work on the issue: read it again later (one state → one hint)."""
    args: dict[str, Any] = {"id": issue.pk}
    if guest_token:
        args["guest_token"] = guest_token
    if issue.status == IssueStatus.WAITING_INPUT:
        condition = f"the maintainers asked for detail on issue {issue.pk}: answer with add_issue_message"
    else:
        condition = f"the maintainers of the receiving workspace triage issue {issue.pk}, within a day"
    return wait(condition, "get_issue_status", args)


BUILD_MISSING = (
    "no build was named and the client is unknown: maintainers may not be able to reproduce this;"
    " send reporter_git_sha or reporter_app_version with the next message"
)


@dataclass
class IssueSubmitted:
    """issue_submit: the issue id and the guest read token (shown only here)."""

    issue: Issue
    guest_token: str
    guest_token_expires_at: datetime
    links: list[tuple[str, str]]
    hint: Hint = field(init=False)

    def __post_init__(self) -> None:
        self.hint = check_back(self.issue)

    def payload(self) -> dict[str, Any]:
        return {
            "issue": issue_payload(self.issue),
            "guestToken": self.guest_token,
            "guestTokenExpiresAt": iso(self.guest_token_expires_at),
            "links": [f"{kind}:{ident}" for kind, ident in self.links],
        }

    def summary(self) -> str:
        issue = self.issue
        lines = [f"Issue {issue.pk} filed ({issue.kind}, {issue.environment_class}): {issue.title}"]
        if issue.redacted_kinds:
            lines.append(f"Redacted before storing: {', '.join(issue.redacted_kinds)}.")
        lines.append(
            f"Guest read token (shown only now, valid until {iso(self.guest_token_expires_at)}):"
            f" {self.guest_token}"
        )
        return "\n".join(lines)


@dataclass
class MessageAdded:
    """issue_message_add (the reporter's side) and issue_reply (the maintainers')."""

    issue: Issue
    message: IssueMessage
    hint: Hint = field(init=False)

    def __post_init__(self) -> None:
        self.hint = check_back(self.issue)

    def payload(self) -> dict[str, Any]:
        return {
            "issue": issue_payload(self.issue),
            "message": message_payload(self.message),
            "warning": BUILD_MISSING if self.message.build_missing else None,
        }

    def summary(self) -> str:
        lines = [f"Message {self.message.pk} added to issue {self.issue.pk} ({self.issue.status})."]
        if self.message.build_missing:
            lines.append(f"Warning: {BUILD_MISSING}.")
        return "\n".join(lines)


@dataclass
class IssueThread:
    """get_issue_status: the issue, its thread, its resolution and upstream link."""

    issue: Issue
    messages: list[IssueMessage]
    guest_token: str | None = None
    hint: Hint = field(init=False)

    def __post_init__(self) -> None:
        final = self.issue.status in FINAL_STATUSES
        self.hint = DONE if final else check_back(self.issue, self.guest_token)

    def payload(self) -> dict[str, Any]:
        return {
            "issue": issue_payload(self.issue),
            "messages": [message_payload(m) for m in self.messages],
        }

    def summary(self) -> str:
        issue = self.issue
        lines = [f"Issue {issue.pk} is {issue.status}: {issue.title}"]
        if issue.resolution:
            lines.append(f"Resolution: {issue.resolution}")
        if issue.duplicate_of_id:
            lines.append(f"Duplicate of issue {issue.duplicate_of_id}.")
        if issue.upstream_url:
            lines.append(f"Upstream: {issue.upstream_url}")
        for message in self.messages:
            lines.append(f"- [{message.side} {iso(message.created_at)}] {message.body}")
        return "\n".join(lines)


def after_triage(issue: Issue, task_id: int | None = None) -> Hint:
    """A maintainer's agent's next step: do the task it made, or follow the thread until it closes."""
    if task_id is not None:
        return next_("start_task", {"id": task_id})
    if issue.status in FINAL_STATUSES:
        return DONE
    if issue.status == IssueStatus.WAITING_INPUT:
        condition = f"the reporter answers the question on issue {issue.pk} (an issue.message_created event)"
    else:
        condition = f"the reporter or a maintainer writes on issue {issue.pk} (issue.* events)"
    return wait(condition, "get_issue_status", {"id": issue.pk})


@dataclass
class IssueTriaged:
    """triage_issue: the issue after the action, and the task it became (make_task)."""

    issue: Issue
    action: str
    task_id: int | None = None
    hint: Hint = field(init=False)

    def __post_init__(self) -> None:
        self.hint = after_triage(self.issue, self.task_id)

    def payload(self) -> dict[str, Any]:
        return {"issue": issue_payload(self.issue), "action": self.action, "taskId": self.task_id}

    def summary(self) -> str:
        issue = self.issue
        line = f"Issue {issue.pk} is {issue.status} after {self.action}."
        return line + (
            f" Task #{self.task_id} does it; accepting it in the Inbox resolves the issue."
            if self.task_id
            else ""
        )


@dataclass
class IssueList:
    """list_issues: the issues the workspace received, newest first."""

    issues: list[Issue]
    hint: Hint = field(init=False)

    def __post_init__(self) -> None:
        waiting = [i for i in self.issues if i.status not in FINAL_STATUSES]
        self.hint = next_("get_issue_status", {"id": waiting[0].pk}) if waiting else DONE

    def payload(self) -> dict[str, Any]:
        return {"issues": [issue_payload(i) for i in self.issues]}

    def summary(self) -> str:
        lines = [f"{len(self.issues)} issue(s)."]
        lines += [f"- {i.pk} [{i.status}, {i.kind}] {i.title}" for i in self.issues]
        return "\n".join(lines)
