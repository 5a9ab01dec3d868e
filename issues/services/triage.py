"""The maintainers' writes (the web triage): reply, set a status, mark a duplicate, resolve.

Each takes an issue the surface got through `access_issue` / `issue_for_maintainer` (the
receiving workspace's scope), locks its row so its events keep the writers' order, and moves
`maintainer_activity_at`, which the reporter's news compares with its last read.
"""

from __future__ import annotations

from datetime import datetime
from urllib.parse import urlsplit

from django.db import transaction

from accounts.models import Seat, User
from boards import clock
from issues import limits
from issues.models import GuestToken, Issue, IssueMessage, IssueStatus
from issues.results import MessageAdded
from issues.services.common import checked_text, emit_issue, redacted
from weft.errors import WeftError, invalid_argument
from weft.hints import fix

# Statuses set_status moves to; resolving and marking a duplicate have their own writes.
SETTABLE = tuple(s for s in IssueStatus.values if s not in {IssueStatus.RESOLVED, IssueStatus.DUPLICATE})


def _locked(issue: Issue) -> Issue:
    return Issue.objects.select_for_update().get(pk=issue.pk)


def _redacted_text(issue: Issue, field: str, value: str, limit: int) -> str:
    """A maintainer's text, checked and redacted with the receiving workspace's mode."""
    text = checked_text(field, value, limit)
    out, _ = redacted(issue.workspace_id, {field: text}, corrected=lambda t: fix("get_my_work"))
    return out[field]


def _touched(issue: Issue, now: datetime, *fields: str) -> None:
    issue.updated_at = now
    issue.maintainer_activity_at = now
    issue.save(update_fields=[*fields, "updated_at", "maintainer_activity_at"])


def _require_seat(issue: Issue, user: User) -> None:
    if not Seat.objects.filter(workspace_id=issue.workspace_id, user=user).exists():
        raise WeftError(
            "not_found",
            f"issue {issue.pk} does not exist in this workspace",
            details={"kind": "issue", "id": str(issue.pk)},
            fix=fix("get_my_work"),
        )


def issue_reply(*, issue: Issue, user: User, body: str) -> MessageAdded:
    """A maintainer's message on the thread; the reporter sees it on its next read."""
    _require_seat(issue, user)
    with transaction.atomic():
        issue = _locked(issue)
        text = _redacted_text(issue, "body", body, limits.MESSAGE)
        now = clock.db_now()
        message = IssueMessage.objects.create(
            workspace_id=issue.workspace_id,
            issue=issue,
            side=IssueMessage.MAINTAINER,
            body=text,
            author_user=user,
            created_at=now,
        )
        _touched(issue, now)
        emit_issue(issue, "issue.message_created", messageId=message.pk, side=message.side)
    return MessageAdded(issue=issue, message=message)


def issue_set_status(*, issue: Issue, status: str, resolution: str | None = None) -> Issue:
    """Move an issue to a status; `resolved` goes through issue_resolve, `duplicate` through
    issue_mark_duplicate (they need what the status means)."""
    if status == IssueStatus.RESOLVED:
        return issue_resolve(issue=issue, resolution=resolution or "")
    if status not in SETTABLE:
        raise invalid_argument(
            "status", f"one of {', '.join(IssueStatus.values)}", fix_hint=fix("get_my_work")
        )
    with transaction.atomic():
        issue = _locked(issue)
        fields = ["status"]
        issue.status = status
        if resolution is not None:
            issue.resolution = _redacted_text(issue, "resolution", resolution, limits.RESOLUTION)
            fields.append("resolution")
        _touched(issue, clock.db_now(), *fields)
        emit_issue(issue, "issue.updated", status=issue.status, fields=fields)
    return issue


def issue_resolve(*, issue: Issue, resolution: str) -> Issue:
    """Resolve with the resolution the reporter will read."""
    with transaction.atomic():
        issue = _locked(issue)
        issue.resolution = _redacted_text(issue, "resolution", resolution, limits.RESOLUTION)
        issue.status = IssueStatus.RESOLVED
        _touched(issue, clock.db_now(), "status", "resolution")
        emit_issue(issue, "issue.resolved", status=issue.status, resolution=issue.resolution)
    return issue


def _refuse_cycle(issue: Issue, of: Issue) -> None:
    """`of` and the issues it duplicates, read from the database, never include `issue`."""
    seen = {issue.pk}
    cursor: Issue | None = of
    while cursor is not None:
        if cursor.pk in seen:
            reason = f"issue {of.pk} is (a duplicate of) issue {issue.pk}: that would be a cycle"
            raise invalid_argument("of", reason, fix_hint=fix("get_my_work"))
        seen.add(cursor.pk)
        cursor = Issue.objects.filter(pk=cursor.duplicate_of_id).first() if cursor.duplicate_of_id else None


def issue_mark_duplicate(*, issue: Issue, of: Issue) -> Issue:
    """Close an issue as a duplicate of another issue of the same workspace (never of itself, no cycle)."""
    if of.workspace_id != issue.workspace_id:
        raise WeftError(
            "not_found",
            f"issue {of.pk} does not exist in this workspace",
            details={"kind": "issue", "id": str(of.pk)},
            fix=fix("get_my_work"),
        )
    with transaction.atomic():
        # Both rows locked in id order, so two marks racing the other way round cannot both pass.
        # A longer cycle needs three concurrent marks; we accept that race: the only walk of the
        # chain (_refuse_cycle) stops at an issue it has seen.
        locked = {
            i.pk: i for i in Issue.objects.select_for_update().filter(pk__in=[issue.pk, of.pk]).order_by("pk")
        }
        issue, of = locked[issue.pk], locked[of.pk]
        _refuse_cycle(issue, of)
        issue.status = IssueStatus.DUPLICATE
        issue.duplicate_of = of
        _touched(issue, clock.db_now(), "status", "duplicate_of")
        emit_issue(
            issue, "issue.updated", status=issue.status, fields=["status", "duplicate_of"], duplicateOf=of.pk
        )
    return issue


def issue_set_upstream(*, issue: Issue, url: str) -> Issue:
    """Link the issue to where it is tracked upstream (an http(s) URL); the reporter reads it."""
    text = checked_text("upstream_url", url, limits.UPSTREAM_URL)
    parts = urlsplit(text)
    if parts.scheme not in {"http", "https"} or not parts.netloc:
        raise invalid_argument("upstream_url", "an http(s) URL with a host", fix_hint=fix("get_my_work"))
    with transaction.atomic():
        issue = _locked(issue)
        issue.upstream_url = text
        _touched(issue, clock.db_now(), "upstream_url")
        emit_issue(issue, "issue.updated", status=issue.status, fields=["upstream_url"])
    return issue


def issue_guest_tokens_revoke(*, issue: Issue) -> int:
    """End every live guest token of the issue at once; how many were live."""
    with transaction.atomic():
        now = clock.db_now()
        return GuestToken.objects.filter(issue=issue, revoked_at=None, expires_at__gt=now).update(
            revoked_at=now
        )
