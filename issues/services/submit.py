"""issue_submit: an agent files an issue, its links and its guest read token in one transaction.

Order of the checks, so that one state gives one answer: argument limits, the build
(provenance), the links' shape, the receiving workspace, its daily cap, redaction, then the
links' targets. A refusal at any step stores nothing.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction

from accounts.connections import token_checksum
from accounts.models import AgentConnection, Workspace
from boards import clock
from issues import limits
from issues.access import link_target
from issues.environment import classify
from issues.models import GuestToken, Issue, IssueKind, IssueLink, LinkTarget
from issues.results import IssueSubmitted
from issues.services.common import (
    call_hint,
    checked_text,
    emit_issue,
    provenance,
    provenance_required,
    redacted,
)
from issues.services.intake import check_daily_cap, receiving_workspace
from weft.errors import WeftError, invalid_argument
from weft.hints import Hint, fix

TOOL = "submit_issue"
LINK_KINDS = tuple(LinkTarget.values)


@dataclass(frozen=True)
class Submission:
    """The submit_issue call as the agent made it: what every refusal's Fix is built from."""

    title: str
    body: str
    kind: str
    reporter_git_sha: str | None = None
    reporter_app_version: str | None = None
    entity_ids_to_link: list[str] | None = None
    workspace: str | None = None

    def args(self, **changes: Any) -> dict[str, Any]:
        return {**vars(self), **changes}

    def fix(self, **changes: Any) -> Hint:
        return call_hint(TOOL, self.args(**changes), otherwise=fix("get_my_work"))

    def without_link(self, index: int) -> Hint:
        links = list(self.entity_ids_to_link or [])
        del links[index]
        return self.fix(entity_ids_to_link=links or None)


def new_guest_token() -> str:
    # Hex only: a token may stand in a hint line, where no generated value may read as a placeholder.
    return f"wgt_{secrets.token_hex(24)}"


def _links(call: Submission) -> list[tuple[str, str]]:
    """`kind:id` entries as (kind, id); a malformed one is refused, its Fix the call without it."""
    entries = call.entity_ids_to_link or []
    if len(entries) > limits.LINKS:
        reason = f"at most {limits.LINKS} items (got {len(entries)})"
        raise invalid_argument("entity_ids_to_link", reason, fix_hint=call.fix(entity_ids_to_link=None))
    parsed = []
    for index, entry in enumerate(entries):
        field = f"entity_ids_to_link[{index}]"
        kind, sep, ident = checked_text(field, entry, limits.LINK_ID).partition(":")
        if not sep or kind not in LINK_KINDS or not ident.strip():
            reason = f"name a {', '.join(LINK_KINDS)} as kind:id, e.g. task:12 (got {entry!r})"
            raise invalid_argument(field, reason, fix_hint=call.without_link(index))
        parsed.append((kind, ident.strip()))
    return parsed


def _targets(reporter: Workspace, links: list[tuple[str, str]], call: Submission) -> list[tuple[str, Any]]:
    """Each link's target as the reporter sees it; one it cannot see refuses the whole submission."""
    found = []
    for index, (kind, ident) in enumerate(links):
        try:
            found.append((kind, link_target(reporter, kind, ident)))
        except WeftError as error:
            raise WeftError(
                "not_found",
                f"entity_ids_to_link[{index}]: {kind} {ident} does not exist in this workspace;"
                " nothing was filed",
                details={"field": f"entity_ids_to_link[{index}]", "kind": kind, "id": ident},
                fix=call.without_link(index),
            ) from error
    return found


def _checked(call: Submission) -> tuple[str, str]:
    title = checked_text("title", call.title, limits.TITLE)
    body = checked_text("body", call.body, limits.BODY)
    if call.kind not in IssueKind.values:
        reason = f"one of {', '.join(IssueKind.values)}"
        raise invalid_argument("kind", reason, fix_hint=call.fix(kind=IssueKind.BUG))
    return title, body


def issue_submit(*, connection: AgentConnection, call: Submission) -> IssueSubmitted:
    """File an issue from an agent connection (PRODUCT §7)."""
    title, body = _checked(call)
    sha, version, filled = provenance(connection, call.reporter_git_sha, call.reporter_app_version)
    if not sha and not version:
        raise provenance_required(TOOL, call.args(), otherwise=fix("get_my_work"))
    links = _links(call)
    reporter = connection.workspace
    receiving = receiving_workspace(reporter, call.workspace, fix_hint=call.fix(workspace=None))
    with transaction.atomic():
        now = clock.db_now()
        check_daily_cap(receiving, reporter, now)
        texts, kinds = redacted(receiving, {"title": title, "body": body}, corrected=lambda t: call.fix(**t))
        targets = _targets(reporter, links, call)
        issue = Issue.objects.create(
            workspace=receiving,
            kind=call.kind,
            title=texts["title"],
            body=texts["body"],
            environment_class=classify(sha, version),
            reporter_git_sha=sha,
            reporter_app_version=version,
            app_version_from_client=filled,
            reporter_workspace=reporter,
            reporter_connection=connection,
            reporter_user_id=connection.user_id,
            redacted_kinds=kinds,
            created_at=now,
            updated_at=now,
        )
        for kind, target in targets:
            _link(issue, kind, target, now)
        token, expires_at = _guest_token(issue, now)
        emit_issue(
            issue,
            "issue.created",
            kind=issue.kind,
            title=issue.title,
            status=issue.status,
            environmentClass=issue.environment_class,
            links=[f"{kind}:{ident}" for kind, ident in links],
        )
    return IssueSubmitted(issue=issue, guest_token=token, guest_token_expires_at=expires_at, links=links)


def _link(issue: Issue, kind: str, target: Any, now: datetime) -> IssueLink:
    field = "target_issue" if kind == LinkTarget.ISSUE else kind
    return IssueLink.objects.create(
        workspace_id=issue.workspace_id, issue=issue, target_type=kind, created_at=now, **{field: target}
    )


def _guest_token(issue: Issue, now: datetime) -> tuple[str, datetime]:
    """A new read token for the issue's thread: shown once, only its SHA-256 kept."""
    token = new_guest_token()
    expires_at = now + limits.GUEST_TOKEN_TTL
    GuestToken.objects.create(
        workspace_id=issue.workspace_id,
        issue=issue,
        token_hash=token_checksum(token),
        created_at=now,
        expires_at=expires_at,
    )
    return token, expires_at
