"""Seats: changing a member's role and removing a member; the last owner always stays."""

from __future__ import annotations

from django.db import transaction
from django.db.models import Q

from accounts import roles
from accounts.access import NotFound
from accounts.models import Seat
from accounts.services.common import refused, unknown_role
from weft.errors import WeftError
from weft.events import emit


def _refuse_unless_allowed(*, seat: Seat, by: Seat | None, role: str | None = None) -> None:
    """Owners manage everyone; admins manage admins and members, and cannot make owners."""
    if by is None or (by.pk == seat.pk and role is None):
        return  # an operator's change, or a person leaving
    if not roles.can_manage(by.role):
        raise refused(
            "forbidden",
            "Only owners and admins can change members.",
            reason="not_a_manager",
            condition="an owner or admin of the workspace makes the change",
        )
    if not roles.may_change(by.role, seat.role, role):
        raise refused(
            "forbidden",
            "Only an owner can change an owner or make someone an owner.",
            reason="owner_only",
            condition="an owner of the workspace makes the change",
        )


def _last_owner(message: str) -> WeftError:
    return refused(
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
        if roles.is_last_owner(current.role, len(owners)):
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
        raise unknown_role(role)
    _refuse_unless_allowed(seat=seat, by=by, role=role)
    with transaction.atomic():
        current, owners = _locked_seat_and_owners(seat)
        if current is None:
            raise NotFound("member", seat.pk)
        previous = current.role
        if role != Seat.OWNER and roles.is_last_owner(previous, len(owners)):
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
