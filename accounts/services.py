"""Writes on accounts: workspaces, plans, seats, invitations, usage metering.

Each write that changes a workspace appends one event per changed row (weft.events) in its own
transaction, and reads the time once from the database clock (boards.clock). Events carry ids and
the changed fields: never an invitation's token or address, never a person's email.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from accounts.access import NotFound
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
from boards import clock
from weft.errors import WeftError, invalid_argument
from weft.events import emit
from weft.hints import wait

ROLE_NAMES = ", ".join(role for role, _ in Seat.ROLES)


def _refused(code: str, message: str, *, reason: str, condition: str) -> WeftError:
    """A refusal a person reads as `message`; `reason` names the rule, `condition` when a retry works."""
    return WeftError(code, message, details={"reason": reason}, fix=wait(condition))


def _unknown_role(role: str) -> WeftError:
    return invalid_argument(
        "role", f"{role!r} is not one of {ROLE_NAMES}", fix_hint=wait(f"the role is one of {ROLE_NAMES}")
    )


def _seat_added(seat: Seat, invitation: Invitation | None) -> None:
    emit(
        workspace_id=seat.workspace_id,
        type="seat.added",
        entity_type="seat",
        entity_id=seat.pk,
        payload={
            "seatId": seat.pk,
            "userId": seat.user_id,
            "role": seat.role,
            "invitationId": invitation.pk if invitation else None,
        },
    )


def workspace_create(*, owner: User, name: str, plan_code: str = Plan.FREE) -> Workspace:
    """A new workspace on the given plan, with `owner` in its first seat."""
    name = name.strip()
    if not name:
        raise invalid_argument(
            "name", "a workspace needs a name", fix_hint=wait("the new workspace is given a name")
        )
    with transaction.atomic():
        now = clock.db_now()
        workspace = Workspace.objects.create(
            name=name[:100], slug=Workspace.unique_slug(name), plan=Plan.named(plan_code), created_at=now
        )
        seat = Seat.objects.create(workspace=workspace, user=owner, role=Seat.OWNER, created_at=now)
        emit(
            workspace_id=workspace.pk,
            type="workspace.created",
            entity_type="workspace",
            entity_id=workspace.pk,
            payload={
                "workspaceId": workspace.pk,
                "name": workspace.name,
                "slug": workspace.slug,
                "plan": workspace.plan.code,
            },
        )
        _seat_added(seat, None)
    return workspace


def _locked_workspace(workspace: Workspace) -> Workspace:
    return Workspace.objects.select_for_update().select_related("plan").get(pk=workspace.pk)


def workspace_set_plan(*, workspace: Workspace, plan: Plan, billing_period: str) -> bool:
    """Move the workspace to `plan`, billed `billing_period`; False when it is there already."""
    if billing_period not in {Workspace.BILLING_MONTHLY, Workspace.BILLING_YEARLY}:
        raise invalid_argument(
            "billing_period",
            f"{billing_period!r} is not one of {Workspace.BILLING_MONTHLY}, {Workspace.BILLING_YEARLY}",
            fix_hint=wait("the billing period is monthly or yearly"),
        )
    with transaction.atomic():
        current = _locked_workspace(workspace)
        before = {"plan": current.plan.code, "billingPeriod": current.billing_period}
        after = {"plan": plan.code, "billingPeriod": billing_period}
        if before == after:
            return False
        Workspace.objects.filter(pk=current.pk).update(plan=plan, billing_period=billing_period)
        emit(
            workspace_id=current.pk,
            type="workspace.plan_changed",
            entity_type="workspace",
            entity_id=current.pk,
            payload={"workspaceId": current.pk, "from": before, "to": after},
        )
    workspace.plan, workspace.billing_period = plan, billing_period
    return True


def workspace_set_suspended(*, workspace: Workspace, suspended: bool) -> bool:
    """The operators' kill switch: on, every agent call refuses; False when it is so already."""
    with transaction.atomic():
        if not Workspace.objects.filter(pk=workspace.pk, is_suspended=not suspended).update(
            is_suspended=suspended
        ):
            return False
        emit(
            workspace_id=workspace.pk,
            type="workspace.suspended" if suspended else "workspace.suspension_lifted",
            entity_type="workspace",
            entity_id=workspace.pk,
            payload={"workspaceId": workspace.pk},
        )
    workspace.is_suspended = suspended
    return True


def usage_consume(*, workspace: Workspace, kind: str, n: int = 1, now: datetime | None = None) -> None:
    """Count `n` units of `kind` against this month's plan cap; refuse with plan_limit_reached past it.

    The increment is one conditional UPDATE (`count + n <= cap`), so concurrent callers can
    neither lose a count nor overshoot the cap. It runs on every agent call, so the usual case
    is that single query; the month's row is created only when the UPDATE finds none.

    Callers inside a write pass the database time they read (`now`). Without it — the meter
    around each agent call — the month is this server's: reading the database clock would cost
    every agent call a query, and a skew of seconds only decides, at a month's edge, which of
    two months one call counts in. Metering is not an event: the counter is the record.
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
    now = now or clock.db_now()
    period = month_start(now.date())
    counts = dict(Usage.objects.filter(workspace=workspace, period=period).values_list("kind", "count"))
    return {
        kind: {"used": counts.get(kind, 0), "limit": workspace.plan.cap_for(kind)} for kind, _ in Usage.KINDS
    }


def _refuse_invite(*, workspace: Workspace, email: str, role: str, by: Seat | None) -> None:
    if role not in dict(Seat.ROLES):
        raise _unknown_role(role)
    if by is not None:
        if not by.can_manage:
            raise _refused(
                "forbidden",
                "Only owners and admins can invite people.",
                reason="not_a_manager",
                condition=f"an owner or admin of {workspace.name} sends the invitation",
            )
        if role == Seat.OWNER and by.role != Seat.OWNER:
            raise _refused(
                "forbidden",
                "Only an owner can invite another owner.",
                reason="owner_only",
                condition=f"an owner of {workspace.name} sends the invitation",
            )
    if Seat.objects.filter(workspace=workspace, user__email__iexact=email).exists():
        raise _refused(
            "conflict",
            f"{email} is already a member of {workspace.name}.",
            reason="already_member",
            condition=f"{email} no longer holds a seat in {workspace.name}",
        )


def invitation_create(
    *, workspace: Workspace, invited_by: User, email: str, role: str = Seat.MEMBER, by: Seat | None = None
) -> Invitation:
    """Invite `email` to the workspace with `role`; a new invitation replaces a pending one.

    `by` is the inviting seat: only owners may invite owners.
    """
    email = email.strip().lower()
    _refuse_invite(workspace=workspace, email=email, role=role, by=by)
    with transaction.atomic():
        now = clock.db_now()
        # One pending invitation per address: a new one replaces the old. The row locks make
        # two replacing invitations revoke (and log) the old one once.
        replaced = list(
            Invitation.objects.select_for_update()
            .filter(workspace=workspace, email=email, accepted_at=None, revoked_at=None)
            .values_list("pk", flat=True)
        )
        Invitation.objects.filter(pk__in=replaced).update(revoked_at=now)
        for pk in replaced:
            _invitation_revoked(workspace.pk, pk, "replaced")
        invitation = Invitation.objects.create(
            workspace=workspace,
            email=email,
            role=role,
            invited_by=invited_by,
            created_at=now,
            expires_at=now + Invitation.TTL,
        )
        emit(
            workspace_id=workspace.pk,
            type="invitation.created",
            entity_type="invitation",
            entity_id=invitation.pk,
            payload={
                "invitationId": invitation.pk,
                "role": role,
                "invitedByUserId": invited_by.pk,
                "expiresAt": invitation.expires_at.isoformat(),
            },
        )
    return invitation


def _invitation_revoked(workspace_id: int, invitation_id: int, reason: str) -> None:
    emit(
        workspace_id=workspace_id,
        type="invitation.revoked",
        entity_type="invitation",
        entity_id=invitation_id,
        payload={"invitationId": invitation_id, "reason": reason},
    )


def _invalid_link() -> WeftError:
    return _refused(
        "not_found",
        "This invitation link is not valid. Ask for a new invitation.",
        reason="invalid",
        condition="someone in the workspace sends you a new invitation",
    )


def invitation_check(*, token: str, user: User | None, now: datetime | None = None) -> Invitation:
    """The invitation behind `token` if `user` (None: signed out) may accept it; else a WeftError
    whose details' `reason` is one of invalid, revoked, used, expired, wrong_account."""
    invitation = Invitation.objects.select_related("workspace", "invited_by").filter(token=token).first()
    if invitation is None:
        raise _invalid_link()
    _refuse_unusable(invitation, user, now or clock.db_now())
    return invitation


def _refuse_unusable(invitation: Invitation, user: User | None, now: datetime) -> None:
    new_one = "the workspace owner sends a new invitation"
    if invitation.revoked_at is not None:
        raise _refused(
            "conflict",
            "This invitation was withdrawn. Ask the workspace owner for a new one.",
            reason="revoked",
            condition=new_one,
        )
    if invitation.accepted_at is not None:
        raise _refused("conflict", "This invitation has already been used.", reason="used", condition=new_one)
    if invitation.expires_at <= now:
        raise _refused(
            "conflict",
            "This invitation has expired. Ask the workspace owner to send a new one.",
            reason="expired",
            condition=new_one,
        )
    if user is not None and invitation.email.lower() != user.email.lower():
        raise _refused(
            "forbidden",
            f"This invitation is for {invitation.email}, but you are signed in as {user.email}. "
            "Sign out and sign in with the invited address.",
            reason="wrong_account",
            condition=f"you are signed in as {invitation.email}",
        )


def invitation_accept(*, token: str, user: User) -> Seat:
    """Accept an invitation for the signed-in user; creates the seat, or explains why not."""
    with transaction.atomic():
        now = clock.db_now()
        # The row lock makes a double submit accept once: the second sees accepted_at set.
        invitation = Invitation.objects.select_for_update().filter(token=token).first()
        if invitation is None:
            raise _invalid_link()
        _refuse_unusable(invitation, user, now)
        seat, created = Seat.objects.get_or_create(
            workspace=invitation.workspace, user=user, defaults={"role": invitation.role, "created_at": now}
        )
        invitation.accepted_at = now
        invitation.accepted_by = user
        invitation.save(update_fields=["accepted_at", "accepted_by"])
        emit(
            workspace_id=invitation.workspace_id,
            type="invitation.accepted",
            entity_type="invitation",
            entity_id=invitation.pk,
            payload={"invitationId": invitation.pk, "userId": user.pk, "seatId": seat.pk},
        )
        if created:
            _seat_added(seat, invitation)
        return seat


def invitation_revoke(*, invitation: Invitation) -> bool:
    """Withdraw a pending invitation; False when it was already used or withdrawn."""
    with transaction.atomic():
        now = clock.db_now()
        if not Invitation.objects.filter(pk=invitation.pk, accepted_at=None, revoked_at=None).update(
            revoked_at=now
        ):
            return False
        _invitation_revoked(invitation.workspace_id, invitation.pk, "withdrawn")
    return True


def _refuse_unless_allowed(*, seat: Seat, by: Seat | None, role: str | None = None) -> None:
    """Owners manage everyone; admins manage admins and members, and cannot make owners."""
    if by is None or (by.pk == seat.pk and role is None):
        return  # an operator's change, or a person leaving
    if not by.can_manage:
        raise _refused(
            "forbidden",
            "Only owners and admins can change members.",
            reason="not_a_manager",
            condition="an owner or admin of the workspace makes the change",
        )
    if by.role != Seat.OWNER and (seat.role == Seat.OWNER or role == Seat.OWNER):
        raise _refused(
            "forbidden",
            "Only an owner can change an owner or make someone an owner.",
            reason="owner_only",
            condition="an owner of the workspace makes the change",
        )


def _last_owner(message: str) -> WeftError:
    return _refused(
        "conflict", message, reason="last_owner", condition="someone else is made an owner of the workspace"
    )


def _locked_seat_and_owners(seat: Seat) -> tuple[Seat | None, list[Seat]]:
    """The seat's row as it is now (None once removed) and the workspace's owners, all locked.

    Locking the owners' rows serialises concurrent changes of two owners, so the last one stays.
    """
    rows = list(
        Seat.objects.select_for_update()
        .filter(Q(role=Seat.OWNER) | Q(pk=seat.pk), workspace_id=seat.workspace_id)
        .order_by("pk")
    )
    current = next((row for row in rows if row.pk == seat.pk), None)
    return current, [row for row in rows if row.role == Seat.OWNER]


def seat_remove(*, seat: Seat, by: Seat | None = None) -> bool:
    """Remove a member (or leave, when `by` is the seat itself); the last owner can neither leave nor
    be removed. False when the seat was gone already."""
    _refuse_unless_allowed(seat=seat, by=by)
    with transaction.atomic():
        current, owners = _locked_seat_and_owners(seat)
        if current is None:
            return False
        if current.role == Seat.OWNER and len(owners) <= 1:
            raise _last_owner("The last owner cannot leave or be removed. Make someone else an owner first.")
        current.delete()
        emit(
            workspace_id=seat.workspace_id,
            type="seat.removed",
            entity_type="seat",
            entity_id=seat.pk,
            payload={"seatId": seat.pk, "userId": current.user_id, "role": current.role},
        )
    return True


def seat_set_role(*, seat: Seat, role: str, by: Seat | None = None) -> Seat:
    """Change a member's role; the last owner cannot step down."""
    if role not in dict(Seat.ROLES):
        raise _unknown_role(role)
    _refuse_unless_allowed(seat=seat, by=by, role=role)
    with transaction.atomic():
        current, owners = _locked_seat_and_owners(seat)
        if current is None:
            raise NotFound("member", seat.pk)
        previous = current.role
        if previous == Seat.OWNER and role != Seat.OWNER and len(owners) <= 1:
            raise _last_owner("The last owner cannot step down. Make someone else an owner first.")
        seat.role = role
        if previous != role:
            seat.save(update_fields=["role"])
            emit(
                workspace_id=seat.workspace_id,
                type="seat.role_changed",
                entity_type="seat",
                entity_id=seat.pk,
                payload={"seatId": seat.pk, "userId": seat.user_id, "from": previous, "to": role},
            )
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
