"""Access helpers: the only way a surface gets a tenant object.

Every lookup is scoped by the caller's workspace; a foreign id and a missing id answer the
same (Http404 on the web, `not_found` for agents).
"""

from __future__ import annotations

from django.http import Http404

from accounts.models import AgentConnection, Invitation, Seat, User, Workspace
from weft.errors import WeftError
from weft.hints import wait


def access_seat(user: User, workspace_slug: str) -> Seat:
    """The user's seat in the workspace named by the URL; 404 when there is none."""
    if not user.is_authenticated:
        raise Http404("No such workspace")
    seat = (
        Seat.objects.select_related("workspace", "workspace__plan")
        .filter(user=user, workspace__slug=workspace_slug)
        .first()
    )
    if seat is None:
        raise Http404("No such workspace")
    return seat


def access_managing_seat(user: User, workspace_slug: str) -> Seat:
    """As access_seat, for owners and admins only (others get the same 404)."""
    seat = access_seat(user, workspace_slug)
    if not seat.can_manage:
        raise Http404("No such workspace")
    return seat


def access_member_seat(seat: Seat, seat_id: int) -> Seat:
    found = Seat.objects.select_related("user").filter(workspace_id=seat.workspace_id, pk=seat_id).first()
    if found is None:
        raise Http404("No such member")
    return found


def access_invitation(seat: Seat, invitation_id: int) -> Invitation:
    found = Invitation.objects.filter(workspace_id=seat.workspace_id, pk=invitation_id).first()
    if found is None:
        raise Http404("No such invitation")
    return found


def access_connection_for_user(user: User, connection_id: int) -> AgentConnection:
    """A connection the user signed in; others' connections answer 404."""
    found = AgentConnection.objects.select_related("workspace").filter(user=user, pk=connection_id).first()
    if found is None:
        raise Http404("No such connection")
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
