"""Reads on accounts for the people's pages: seats, members, invitations, usage."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from accounts import roles
from accounts.models import Invitation, PlanChange, Seat, Usage, User, Workspace
from accounts.services.workspaces import usage_for


def latest_seat(user: User) -> Seat | None:
    """The seat the user took most recently, if any."""
    return Seat.objects.filter(user=user).select_related("workspace").order_by("-created_at").first()


def has_seat(user: User) -> bool:
    return Seat.objects.filter(user=user).exists()


def seats_by_workspace_name(user: User) -> list[Seat]:
    """The user's seats with their workspaces, by workspace name."""
    return list(Seat.objects.select_related("workspace").filter(user=user).order_by("workspace__name"))


def email_has_account(email: str) -> bool:
    """Someone has signed up with this address (compared without case)."""
    return User.objects.filter(email__iexact=email).exists()


def pending_invitations(workspace_id: int) -> list[Invitation]:
    """Invitations neither accepted, revoked nor expired, newest first."""
    candidates = Invitation.objects.filter(workspace_id=workspace_id, accepted_at=None, revoked_at=None)
    return [i for i in candidates.order_by("-created_at") if i.is_pending]


@dataclass(frozen=True)
class MemberRow:
    """One member on the members page, with what the viewing seat may do to them."""

    member: Seat
    is_you: bool
    may_change_role: bool
    may_remove: bool
    last_owner: bool


def member_rows(seat: Seat) -> list[MemberRow]:
    """The workspace's members by arrival, each with the viewer's permitted changes."""
    members = list(seat.workspace.seats.select_related("user").order_by("created_at"))
    owners = sum(1 for m in members if m.role == roles.OWNER)
    rows = []
    for member in members:
        is_you = member.pk == seat.pk
        may_change = not is_you and roles.may_change(seat.role, member.role)
        rows.append(
            MemberRow(
                member=member,
                is_you=is_you,
                may_change_role=may_change,
                may_remove=may_change,
                last_owner=is_you and roles.is_last_owner(member.role, owners),
            )
        )
    return rows


@dataclass(frozen=True)
class UsageRow:
    """One monthly counter against its cap (None: no cap)."""

    label: str
    used: int
    limit: int | None
    percent: int
    full: bool


def usage_rows(seat: Seat, now: datetime | None = None) -> list[UsageRow]:
    """This month's counters of the seat's workspace, ready to show as meters."""
    rows = []
    for kind, counter in usage_for(workspace=seat.workspace, now=now).items():
        used = counter["used"] or 0
        limit = counter["limit"]
        rows.append(
            UsageRow(
                label=dict(Usage.KINDS)[kind],
                used=used,
                limit=limit,
                percent=min(100, round(100 * used / limit)) if limit else 0,
                full=limit is not None and used >= limit,
            )
        )
    return rows


def plan_changes(*, workspace: Workspace, limit: int = 10) -> list[PlanChange]:
    """The workspace's latest plan changes, newest first, for the plan page."""
    return list(
        PlanChange.objects.filter(workspace=workspace)
        .select_related("by_user")
        .order_by("-created_at", "-pk")[:limit]
    )
