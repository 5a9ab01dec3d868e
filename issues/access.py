"""Access helpers for issues: the only way a surface gets an issue or a link target.

Three scopes, each answering a foreign id exactly like a missing one (`not_found`):
- maintainers: issues received by the workspace (`access_issue`); a maintainer's agent is a
  connection whose user holds an owner's or admin's seat there (`require_maintainer`), the web
  triage's rule;
- a reporting agent: issues its workspace received or filed elsewhere (`access_issue_for_reporter`);
- a guest token: the one issue it was issued for, whoever holds it (`access_issue_by_guest_token`).
"""

from __future__ import annotations

import uuid
from typing import Any

from django.db.models import Q

from accounts.connections import token_checksum
from accounts.models import AgentConnection, Seat, Workspace
from boards.access import access_board, access_task
from boards.models import Run
from issues import limits
from issues.models import GuestToken, Issue
from weft.errors import WeftError, not_found
from weft.hints import Hint, fix, wait


def _workspace_id(workspace: Workspace | int) -> int:
    return workspace if isinstance(workspace, int) else workspace.pk


def _missing(ident: Any) -> WeftError:
    return not_found("issue", ident, fix_hint=fix("get_my_work"))


def issue_pk(ident: Any) -> int:
    """Ids arrive as ints or strings of digits; anything else cannot exist."""
    try:
        value = int(str(ident).strip())
    except (TypeError, ValueError):
        raise _missing(ident) from None
    if not 1 <= value <= limits.ID_MAX:
        raise _missing(ident)
    return value


def access_issue(workspace: Workspace | int, issue_id: Any) -> Issue:
    """An issue received by `workspace` (the maintainers' scope)."""
    found = Issue.objects.filter(workspace_id=_workspace_id(workspace), pk=issue_pk(issue_id)).first()
    if found is None:
        raise _missing(issue_id)
    return found


def require_maintainer(connection: AgentConnection, issue_id: Any = None) -> None:
    """Refuse a connection whose user is no owner or admin of its workspace (checked before any id,
    so a refused agent learns nothing of which issues exist)."""
    seat = Seat.objects.filter(workspace_id=connection.workspace_id, user_id=connection.user_id).first()
    if seat is not None and seat.can_manage:
        return
    slug = connection.workspace.slug
    condition = f"an owner or admin of workspace {slug} triages, or signs in an agent of their own"
    read = ("get_issue_status", {"id": issue_pk(issue_id)}) if issue_id is not None else (None, None)
    raise WeftError(
        "forbidden",
        f"only the agents of owners and admins of workspace {slug} triage its issues",
        details={"workspace": slug},
        fix=wait(condition, *read),
    )


def access_issue_for_maintainer(connection: AgentConnection, issue_id: Any) -> Issue:
    """An issue received by the connection's workspace, for a maintainer's agent."""
    require_maintainer(connection, issue_id)
    return access_issue(connection.workspace_id, issue_id)


def reporter_scope(workspace: Workspace | int) -> Q:
    """Issues an agent of `workspace` may read without a token: received there, or filed from there."""
    workspace_id = _workspace_id(workspace)
    return Q(workspace_id=workspace_id) | Q(reporter_workspace_id=workspace_id)


def access_issue_for_reporter(workspace: Workspace | int, issue_id: Any) -> Issue:
    found = Issue.objects.filter(reporter_scope(workspace), pk=issue_pk(issue_id)).first()
    if found is None:
        raise _missing(issue_id)
    return found


def _token_refused(code: str, message: str, issue_id: Any, again: Hint) -> WeftError:
    return WeftError(code, message, details={"issueId": str(issue_id)}, fix=again)


def access_issue_by_guest_token(token: str, issue_id: Any, *, now: Any, again: Hint) -> Issue:
    """The issue a live guest token was issued for; `again` is the Fix/Wait of a refused token.

    A token that is unknown, revoked or past its expiry is refused (401-class) whatever the id;
    a live token with another issue's id answers not_found, like any id it does not name.
    """
    row = GuestToken.objects.filter(token_hash=token_checksum(token)).select_related("issue").first()
    if row is None:
        raise _token_refused("guest_token_invalid", "this guest token names no issue thread", issue_id, again)
    if row.revoked_at is not None:
        raise _token_refused("guest_token_invalid", "this guest token was revoked", issue_id, again)
    if row.expires_at <= now:
        message = f"this guest token expired at {row.expires_at.isoformat()}"
        raise _token_refused("guest_token_expired", message, issue_id, again)
    if row.issue_id != issue_pk(issue_id):
        raise _missing(issue_id)
    return row.issue


def token_again(issue_id: Any, *, readable: bool) -> Hint:
    """After a refused token: the same read without it when the caller may read the issue anyway."""
    if readable:
        return fix("get_issue_status", {"id": issue_pk(issue_id)})
    return wait(f"the reporter of issue {issue_id} shares a live guest token (each lasts 30 days)")


# --- link targets: what the reporter can see ------------------------------------------------


def link_target(workspace: Workspace, kind: str, ident: str) -> Any:
    """The task, run, board or issue that `kind:ident` names in the reporter's workspace."""
    if kind == "task":
        return access_task(workspace, ident)
    if kind == "board":
        return access_board(workspace, ident)
    if kind == "issue":
        return access_issue_for_reporter(workspace, ident)
    try:
        run_uuid = uuid.UUID(ident)
    except ValueError:
        raise not_found("run", ident) from None
    run = Run.objects.filter(workspace_id=workspace.pk, run_id=run_uuid).first()
    if run is None:
        raise not_found("run", ident)
    return run
