"""Typed results of the issue services and selectors: each carries its hint, payload and summary."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from issues.models import FINAL_STATUSES, Issue, IssueMessage, IssueStatus
from weft.hints import DONE, Hint, wait


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
