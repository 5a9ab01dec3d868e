"""Writes on accounts: workspaces, seats, invitations, usage metering."""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.core.mail import send_mail
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
            name=name[:100], slug=Workspace.unique_slug(name), plan=Plan.named(plan_code)
        )
        Seat.objects.create(workspace=workspace, user=owner, role=Seat.OWNER)
    return workspace


def usage_consume(*, workspace: Workspace, kind: str, n: int = 1, now: datetime | None = None) -> None:
    """Count `n` units of `kind` against this month's plan cap; refuse with plan_limit_reached past it.

    The increment is one conditional UPDATE (`count + n <= cap`), so concurrent callers can
    neither lose a count nor overshoot the cap. It runs on every agent call, so the usual case
    is that single query; the month's row is created only when the UPDATE finds none.
    """
    now = now or timezone.now()
    period = month_start(now.date())
    cap = workspace.plan.cap_for(kind)
    rows = Usage.objects.filter(workspace=workspace, period=period, kind=kind)
    if cap is not None:
        rows = rows.filter(count__lte=cap - n)
    if rows.update(count=F("count") + n):
        return
    # No row for this month yet, or the cap is reached. Create the row (a racing creator is
    # harmless: ignore_conflicts) and try once more.
    Usage.objects.bulk_create(
        [Usage(workspace=workspace, period=period, kind=kind, count=0)], ignore_conflicts=True
    )
    if rows.update(count=F("count") + n):
        return
    used = Usage.objects.get(workspace=workspace, period=period, kind=kind).count
    resets = next_month_start(now.date())
    label = dict(Usage.KINDS)[kind].lower()
    raise WeftError(
        "plan_limit_reached",
        f"the {workspace.plan.name} plan allows {cap} {label} a month; {used} used,"
        f" resets {resets.isoformat()}. Upgrade to Pro for no cap.",
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
    counts = dict(Usage.objects.filter(workspace=workspace, period=period).values_list("kind", "count"))
    return {
        kind: {"used": counts.get(kind, 0), "limit": workspace.plan.cap_for(kind)} for kind, _ in Usage.KINDS
    }


class InvitationError(Exception):
    """Why an invitation cannot be sent or accepted; the message is shown to the person.

    `reason` is one of invalid, revoked, used, expired, wrong_account, refused.
    """

    def __init__(self, message: str, reason: str = "refused") -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason


def invitation_create(
    *, workspace: Workspace, invited_by: User, email: str, role: str = Seat.MEMBER, by: Seat | None = None
) -> Invitation:
    """Invite `email` to the workspace with `role`; a new invitation replaces a pending one.

    `by` is the inviting seat: only owners may invite owners.
    """
    email = email.strip().lower()
    if role not in dict(Seat.ROLES):
        raise InvitationError(f"Unknown role {role!r}.")
    if by is not None:
        if not by.can_manage:
            raise InvitationError("Only owners and admins can invite people.")
        if role == Seat.OWNER and by.role != Seat.OWNER:
            raise InvitationError("Only an owner can invite another owner.")
    if Seat.objects.filter(workspace=workspace, user__email__iexact=email).exists():
        raise InvitationError(f"{email} is already a member of {workspace.name}.")
    now = timezone.now()
    with transaction.atomic():
        # One pending invitation per address: a new one replaces the old.
        Invitation.objects.filter(workspace=workspace, email=email, accepted_at=None, revoked_at=None).update(
            revoked_at=now
        )
        return Invitation.objects.create(
            workspace=workspace,
            email=email,
            role=role,
            invited_by=invited_by,
            created_at=now,
            expires_at=now + Invitation.TTL,
        )


def invitation_check(*, token: str, user: User | None, now: datetime | None = None) -> Invitation:
    """The invitation behind `token` if `user` (None: signed out) may accept it; else InvitationError."""
    invitation = Invitation.objects.select_related("workspace", "invited_by").filter(token=token).first()
    if invitation is None:
        raise InvitationError("This invitation link is not valid. Ask for a new invitation.", "invalid")
    _refuse_unusable(invitation, user, now or timezone.now())
    return invitation


def _refuse_unusable(invitation: Invitation, user: User | None, now: datetime) -> None:
    if invitation.revoked_at is not None:
        raise InvitationError(
            "This invitation was withdrawn. Ask the workspace owner for a new one.", "revoked"
        )
    if invitation.accepted_at is not None:
        raise InvitationError("This invitation has already been used.", "used")
    if invitation.expires_at <= now:
        raise InvitationError(
            "This invitation has expired. Ask the workspace owner to send a new one.", "expired"
        )
    if user is not None and invitation.email.lower() != user.email.lower():
        raise InvitationError(
            f"This invitation is for {invitation.email}, but you are signed in as {user.email}. "
            "Sign out and sign in with the invited address.",
            "wrong_account",
        )


def invitation_accept(*, token: str, user: User) -> Seat:
    """Accept an invitation for the signed-in user; creates the seat, or explains why not."""
    now = timezone.now()
    with transaction.atomic():
        # The row lock makes a double submit accept once: the second sees accepted_at set.
        invitation = Invitation.objects.select_for_update().filter(token=token).first()
        if invitation is None:
            raise InvitationError("This invitation link is not valid. Ask for a new invitation.", "invalid")
        _refuse_unusable(invitation, user, now)
        seat, _created = Seat.objects.get_or_create(
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


def _refuse_unless_allowed(*, seat: Seat, by: Seat | None, role: str | None = None) -> None:
    """Owners manage everyone; admins manage admins and members, and cannot make owners."""
    if by is None or (by.pk == seat.pk and role is None):
        return  # an operator's change, or a person leaving
    if not by.can_manage:
        raise SeatError("Only owners and admins can change members.")
    if by.role != Seat.OWNER and (seat.role == Seat.OWNER or role == Seat.OWNER):
        raise SeatError("Only an owner can change an owner or make someone an owner.")


def seat_remove(*, seat: Seat, by: Seat | None = None) -> None:
    """Remove a member (or leave, when `by` is the seat itself); the last owner can neither leave nor
    be removed."""
    _refuse_unless_allowed(seat=seat, by=by)
    with transaction.atomic():
        # Locking the owners' rows serialises concurrent removals of two owners.
        owners = list(
            Seat.objects.select_for_update().filter(workspace_id=seat.workspace_id, role=Seat.OWNER)
        )
        if seat.role == Seat.OWNER and len(owners) <= 1:
            raise SeatError("The last owner cannot leave or be removed. Make someone else an owner first.")
        Seat.objects.filter(pk=seat.pk).delete()


def seat_set_role(*, seat: Seat, role: str, by: Seat | None = None) -> Seat:
    """Change a member's role; the last owner cannot step down."""
    if role not in dict(Seat.ROLES):
        raise SeatError(f"Unknown role {role!r}.")
    _refuse_unless_allowed(seat=seat, by=by, role=role)
    with transaction.atomic():
        owners = list(
            Seat.objects.select_for_update().filter(workspace_id=seat.workspace_id, role=Seat.OWNER)
        )
        if seat.role == Seat.OWNER and role != Seat.OWNER and len(owners) <= 1:
            raise SeatError("The last owner cannot step down. Make someone else an owner first.")
        seat.role = role
        seat.save(update_fields=["role"])
        return seat


def invitation_send(*, invitation: Invitation, accept_url: str) -> None:
    """Email the invitation's accept link once the invitation is committed."""
    inviter = invitation.invited_by.display_name if invitation.invited_by else "Someone"
    expires = invitation.expires_at.strftime("%d %B %Y")
    body = (
        f"{inviter} invited you to the {invitation.workspace.name} workspace on Weft "
        f"as {invitation.get_role_display().lower()}.\n\n"
        f"Accept the invitation:\n{accept_url}\n\n"
        f"The link works until {expires} and only for {invitation.email}.\n"
    )
    subject = f"{settings.ACCOUNT_EMAIL_SUBJECT_PREFIX}Join {invitation.workspace.name} on Weft"
    transaction.on_commit(lambda: send_mail(subject, body, settings.DEFAULT_FROM_EMAIL, [invitation.email]))
