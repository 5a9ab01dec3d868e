"""Invitations: sending, checking, accepting and withdrawing one; a new one replaces a pending one."""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction

from accounts.models import Invitation, Seat, User, Workspace
from accounts.services.common import refused, seat_added, unknown_role
from boards import clock
from weft.errors import WeftError
from weft.events import emit


def _refuse_invite(*, workspace: Workspace, email: str, role: str, by: Seat | None) -> None:
    if role not in dict(Seat.ROLES):
        raise unknown_role(role)
    if by is not None:
        if not by.can_manage:
            raise refused(
                "forbidden",
                "Only owners and admins can invite people.",
                reason="not_a_manager",
                condition=f"an owner or admin of {workspace.name} sends the invitation",
            )
        if role == Seat.OWNER and by.role != Seat.OWNER:
            raise refused(
                "forbidden",
                "Only an owner can invite another owner.",
                reason="owner_only",
                condition=f"an owner of {workspace.name} sends the invitation",
            )
    if Seat.objects.filter(workspace=workspace, user__email__iexact=email).exists():
        raise refused(
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
    return refused(
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
        raise refused(
            "conflict",
            "This invitation was withdrawn. Ask the workspace owner for a new one.",
            reason="revoked",
            condition=new_one,
        )
    if invitation.accepted_at is not None:
        raise refused("conflict", "This invitation has already been used.", reason="used", condition=new_one)
    if invitation.expires_at <= now:
        raise refused(
            "conflict",
            "This invitation has expired. Ask the workspace owner to send a new one.",
            reason="expired",
            condition=new_one,
        )
    if user is not None and invitation.email.lower() != user.email.lower():
        raise refused(
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
            seat_added(seat, invitation)
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
