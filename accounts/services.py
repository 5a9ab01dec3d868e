"""Writes on accounts: workspaces, seats, invitations, usage metering."""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from accounts.models import (
    Invitation,
    Plan,
    Seat,
    Usage,
    User,
    Workspace,
    month_start,
    next_month_start,
)
from weft.errors import WeftError
from weft.hints import wait


def workspace_create(*, owner: User, name: str, plan_code: str = Plan.FREE) -> Workspace:
    """A new workspace on the given plan, with `owner` in its first seat."""
    name = name.strip()
    if not name:
        raise ValueError("A workspace needs a name")
    with transaction.atomic():
        workspace = Workspace.objects.create(
            name=name[:100], slug=Workspace.unique_slug(name), plan=Plan.objects.get(code=plan_code)
        )
        Seat.objects.create(workspace=workspace, user=owner, role=Seat.OWNER)
    return workspace


def usage_consume(*, workspace: Workspace, kind: str, n: int = 1, now: datetime | None = None) -> int:
    """Count `n` units of `kind` against this month's plan cap; refuse with plan_limit_reached past it.

    The increment is one conditional UPDATE (`count + n <= cap`), so concurrent callers can
    neither lose a count nor overshoot the cap. Returns the new count.
    """
    now = now or timezone.now()
    period = month_start(now.date())
    cap = workspace.plan.cap_for(kind)
    # Make sure the month's row exists; a racing creator is harmless (ignore_conflicts).
    Usage.objects.bulk_create(
        [Usage(workspace=workspace, period=period, kind=kind, count=0)], ignore_conflicts=True
    )
    rows = Usage.objects.filter(workspace=workspace, period=period, kind=kind)
    if cap is not None:
        rows = rows.filter(count__lte=cap - n)
    with transaction.atomic():
        changed = rows.update(count=F("count") + n)
        if changed:
            return Usage.objects.get(workspace=workspace, period=period, kind=kind).count
    used = Usage.objects.get(workspace=workspace, period=period, kind=kind).count
    resets = next_month_start(now.date())
    label = dict(Usage.KINDS)[kind].lower()
    raise WeftError(
        "plan_limit_reached",
        f"the {workspace.plan.name} plan allows {cap} {label} a month; {used} used, resets {resets.isoformat()}."
        " Upgrade to Pro for no cap.",
        details={
            "kind": kind,
            "used": used,
            "limit": cap,
            "resets_at": resets.isoformat(),
            "upgrade": "pro",
        },
        fix=wait(f"the monthly allowance resets on {resets.isoformat()} or the workspace moves to Pro"),
    )


def usage_for(*, workspace: Workspace, now: datetime | None = None) -> dict[str, dict[str, int | None]]:
    """This month's counters and caps, by kind."""
    now = now or timezone.now()
    period = month_start(now.date())
    counts = dict(
        Usage.objects.filter(workspace=workspace, period=period).values_list("kind", "count")
    )
    return {
        kind: {"used": counts.get(kind, 0), "limit": workspace.plan.cap_for(kind)}
        for kind, _ in Usage.KINDS
    }


def invitation_create(*, workspace: Workspace, invited_by: User, email: str, role: str = Seat.MEMBER) -> Invitation:
    email = email.strip().lower()
    now = timezone.now()
    with transaction.atomic():
        # One pending invitation per address: a new one replaces the old.
        Invitation.objects.filter(
            workspace=workspace, email=email, accepted_at=None, revoked_at=None
        ).update(revoked_at=now)
        return Invitation.objects.create(
            workspace=workspace,
            email=email,
            role=role,
            invited_by=invited_by,
            created_at=now,
            expires_at=now + Invitation.TTL,
        )


class InvitationError(Exception):
    """Why an invitation cannot be accepted; the message is shown to the person."""


def invitation_accept(*, token: str, user: User) -> Seat:
    """Accept an invitation for the signed-in user; creates the seat, or explains why not."""
    now = timezone.now()
    with transaction.atomic():
        invitation = Invitation.objects.select_for_update().filter(token=token).first()
        if invitation is None:
            raise InvitationError("This invitation link is not valid. Ask for a new invitation.")
        if invitation.revoked_at is not None:
            raise InvitationError("This invitation was withdrawn. Ask the workspace owner for a new one.")
        if invitation.accepted_at is not None:
            raise InvitationError("This invitation has already been used.")
        if invitation.expires_at <= now:
            raise InvitationError("This invitation has expired. Ask the workspace owner to send a new one.")
        if invitation.email.lower() != user.email.lower():
            raise InvitationError(
                f"This invitation is for {invitation.email}, but you are signed in as {user.email}. "
                "Sign in with the invited address."
            )
        seat, created = Seat.objects.get_or_create(
            workspace=invitation.workspace, user=user, defaults={"role": invitation.role}
        )
        invitation.accepted_at = now
        invitation.accepted_by = user
        invitation.save(update_fields=["accepted_at", "accepted_by"])
        return seat


def invitation_revoke(*, invitation: Invitation) -> None:
    Invitation.objects.filter(pk=invitation.pk, accepted_at=None, revoked_at=None).update(
        revoked_at=timezone.now()
    )


class SeatError(Exception):
    """Why a seat cannot be removed or changed; shown to the person."""


def seat_remove(*, seat: Seat) -> None:
    """Remove a member; the last owner can neither leave nor be removed."""
    with transaction.atomic():
        owners = list(
            Seat.objects.select_for_update().filter(workspace_id=seat.workspace_id, role=Seat.OWNER)
        )
        if seat.role == Seat.OWNER and len(owners) <= 1:
            raise SeatError("The last owner cannot leave or be removed. Make someone else an owner first.")
        Seat.objects.filter(pk=seat.pk).delete()


def seat_set_role(*, seat: Seat, role: str) -> Seat:
    with transaction.atomic():
        owners = list(
            Seat.objects.select_for_update().filter(workspace_id=seat.workspace_id, role=Seat.OWNER)
        )
        if seat.role == Seat.OWNER and role != Seat.OWNER and len(owners) <= 1:
            raise SeatError("The last owner cannot step down. Make someone else an owner first.")
        seat.role = role
        seat.save(update_fields=["role"])
        return seat
