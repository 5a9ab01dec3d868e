"""Access helpers: the only way a surface gets a tenant object.

Every lookup is scoped by the caller's workspace; a foreign id and a missing id answer the
same: `not_found`, which the web answers with its 404 page.
"""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser
from django.http import Http404

from accounts.models import (
    AgentConnection,
    Invitation,
    PersonalAccessToken,
    PlanChange,
    Seat,
    User,
    Workspace,
)
from weft.errors import WeftError, not_found
from weft.hints import wait


class NotFound(WeftError, Http404):
    """`not_found` that is also Django's Http404, so every web view answers it with the 404 page.

    Boards' pages turn a not_found into Http404 inside `workspace_view`, but they look the seat up
    before that, and accounts' own views have no wrapper: raised anywhere, this one still reads as
    the same 404 a missing page gets.
    """

    def __init__(self, kind: str, ident: object, *, message: str | None = None) -> None:
        base = not_found(kind, ident)
        super().__init__(base.code, message or base.message, details=base.details, fix=base.fix)


def find_seat(user: User | AnonymousUser | None, workspace_slug: str) -> Seat | None:
    """The user's seat in the workspace named `workspace_slug`, with workspace and plan; None when
    there is none (signed out, no such workspace, or not theirs: one answer for all three)."""
    if user is None or not user.is_authenticated:
        return None
    return (
        Seat.objects.select_related("workspace", "workspace__plan")
        .filter(user_id=user.pk, workspace__slug=workspace_slug)
        .first()
    )


def _no_workspace(workspace_slug: str) -> NotFound:
    return NotFound(
        "workspace",
        workspace_slug,
        message=f"workspace {workspace_slug} does not exist or you have no seat in it",
    )


def access_seat(user: User, workspace_slug: str) -> Seat:
    """The user's seat in the workspace named by the URL; not_found when there is none."""
    seat = find_seat(user, workspace_slug)
    if seat is None:
        raise _no_workspace(workspace_slug)
    return seat


def access_managing_seat(user: User, workspace_slug: str) -> Seat:
    """As access_seat, for owners and admins only (others get the same not_found)."""
    seat = access_seat(user, workspace_slug)
    if not seat.can_manage:
        raise _no_workspace(workspace_slug)
    return seat


def access_member_seat(seat: Seat, seat_id: int) -> Seat:
    found = Seat.objects.select_related("user").filter(workspace_id=seat.workspace_id, pk=seat_id).first()
    if found is None:
        raise NotFound("member", seat_id)
    return found


def access_invitation(seat: Seat, invitation_id: int) -> Invitation:
    found = Invitation.objects.filter(workspace_id=seat.workspace_id, pk=invitation_id).first()
    if found is None:
        raise NotFound("invitation", invitation_id)
    return found


def access_connection_for_user(user: User, connection_id: int) -> AgentConnection:
    """A connection the user signed in; others' connections answer not_found."""
    found = AgentConnection.objects.select_related("workspace").filter(user=user, pk=connection_id).first()
    if found is None:
        raise NotFound(
            "connection", connection_id, message=f"connection {connection_id} is not one you signed in"
        )
    return found


def access_personal_token(seat: Seat, token_id: int) -> PersonalAccessToken:
    """A token of the seat's workspace the seat may see: its own, or any for owners and admins."""
    rows = PersonalAccessToken.objects.select_related("connection").filter(workspace_id=seat.workspace_id)
    if not seat.can_manage:
        rows = rows.filter(user_id=seat.user_id)
    found = rows.filter(pk=token_id).first()
    if found is None:
        raise NotFound("token", token_id)
    return found


def require_active_workspace(workspace: Workspace) -> None:
    """Agent calls refuse on a suspended workspace."""
    if workspace.is_suspended:
        raise WeftError(
            "workspace_suspended",
            f"workspace {workspace.slug} is suspended by the operators; agent calls are refused",
            details={"workspace": workspace.slug},
            fix=wait(f"an operator lifts the suspension of workspace {workspace.slug}", "get_my_work"),
        )


def access_deciding_person(connection: AgentConnection) -> User:
    """The person a REST caller decides the Inbox as: the person of a personal access token made
    with "May decide my Inbox". Any other credential — an agent's OAuth token, a token without
    that choice — is refused: an agent must not accept its own work."""
    token = (
        PersonalAccessToken.objects.select_related("user")
        .filter(connection_id=connection.pk, can_decide=True, revoked_at=None)
        .first()
    )
    if token is None:
        raise WeftError(
            "forbidden",
            "only a personal access token made with “May decide my Inbox” decides the Inbox as its person",
            details={"connectionId": connection.pk},
            fix=wait(
                "a person creates a personal access token with “May decide my Inbox” on the tokens page",
                "get_my_work",
            ),
        )
    return token.user


def access_plan_change(seat: Seat, change_id: int) -> PlanChange:
    """A plan change of the seat's workspace (another workspace's answers 404)."""
    found = PlanChange.objects.filter(workspace_id=seat.workspace_id, pk=change_id).first()
    if found is None:
        raise NotFound("plan change", change_id)
    return found
