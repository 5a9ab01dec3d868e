"""What the accounts writes share: refusals a person reads, the role vocabulary, the seat-added event."""

from __future__ import annotations

from accounts.models import Invitation, Seat
from weft.errors import WeftError, invalid_argument
from weft.events import emit
from weft.hints import wait

ROLE_NAMES = ", ".join(role for role, _ in Seat.ROLES)


def refused(code: str, message: str, *, reason: str, condition: str) -> WeftError:
    """A refusal a person reads as `message`; `reason` names the rule, `condition` when a retry works."""
    return WeftError(code, message, details={"reason": reason}, fix=wait(condition))


def unknown_role(role: str) -> WeftError:
    return invalid_argument(
        "role", f"{role!r} is not one of {ROLE_NAMES}", fix_hint=wait(f"the role is one of {ROLE_NAMES}")
    )


def seat_added(seat: Seat, invitation: Invitation | None) -> None:
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
