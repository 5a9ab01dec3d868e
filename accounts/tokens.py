"""Personal access tokens: create, revoke, resolve a bearer token, count its calls, list them.

A token acts through its own agent connection (created with it, named after it, owned by its
person, in its workspace), so claims, leases, metering and the gate treat it like an OAuth
client. Revoking the token revokes the connection and the reverse (`connections._end`).

Who may do what: any person with a seat creates tokens for themselves and sees and revokes their
own; owners and admins also see and revoke everyone's tokens in the workspace. Another member's
token answers not_found, like a missing one.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from accounts.connections import LAST_USED_RESOLUTION, connection_create, connection_revoke, token_checksum
from accounts.models import AgentConnection, PersonalAccessToken, Seat
from accounts.oauth_ratelimit import rate_hit
from weft.errors import WeftError
from weft.hints import wait

# How long a new token lives: the choices of the page, in days (None: until revoked).
EXPIRY_DAYS: list[int | None] = [7, 30, 90, None]
RATE_WINDOW = timedelta(minutes=1)


@dataclass(frozen=True)
class CreatedToken:
    """A new token and its secret, which exists only in this value."""

    token: PersonalAccessToken
    secret: str


def pat_create(
    *, seat: Seat, name: str, expires_in_days: int | None, can_decide: bool = False
) -> CreatedToken:
    """A token for the seat's person in the seat's workspace, with its own connection."""
    # Hex, like guest tokens: 192 bits, and a token echoed back never reads as a placeholder.
    secret = PersonalAccessToken.PREFIX + secrets.token_hex(24)
    with transaction.atomic():
        connection = connection_create(user=seat.user, workspace=seat.workspace, name=f"Token: {name}")
        now = timezone.now()  # expiry is read by this server's clock (pat_resolve)
        token = PersonalAccessToken.objects.create(
            connection=connection,
            workspace=seat.workspace,
            user=seat.user,
            name=name,
            token_hash=token_checksum(secret),
            created_at=now,
            expires_at=now + timedelta(days=expires_in_days) if expires_in_days else None,
            can_decide=can_decide,
        )
    return CreatedToken(token=token, secret=secret)


def pat_revoke(*, token: PersonalAccessToken) -> None:
    """End the token and its connection at once (the next call with it answers 401)."""
    connection_revoke(connection=token.connection)
    token.refresh_from_db(fields=["revoked_at"])


def pat_resolve(secret: str, *, now: datetime | None = None) -> PersonalAccessToken | None:
    """The live token behind a bearer secret, or None: unknown, expired, revoked or seat lost."""
    if not secret.startswith(PersonalAccessToken.PREFIX):
        return None
    now = now or timezone.now()
    seat = Seat.objects.filter(workspace_id=OuterRef("workspace_id"), user_id=OuterRef("user_id"))
    token = (
        PersonalAccessToken.objects.filter(
            Exists(seat), Q(expires_at=None) | Q(expires_at__gt=now), token_hash=token_checksum(secret)
        )
        .filter(revoked_at=None, connection__revoked_at=None)
        .first()
    )
    if token is None:
        return None
    # last_used_at is a hint for people, not an audit log: at most one write a minute.
    if token.last_used_at is None or token.last_used_at < now - LAST_USED_RESOLUTION:
        PersonalAccessToken.objects.filter(pk=token.pk).update(last_used_at=now)
        AgentConnection.objects.filter(pk=token.connection_id).update(last_used_at=now)
        token.last_used_at = now
    return token


def pat_rate_hit(*, token_id: int) -> None:
    """Count one call of the token; rate_limited past WEFT_PAT_RATE_PER_MINUTE in a minute."""
    limit = settings.WEFT_PAT_RATE_PER_MINUTE
    retry_after = rate_hit(key=f"pat:{token_id}", limit=limit, window=RATE_WINDOW)
    if retry_after is None:
        return
    raise WeftError(
        "rate_limited",
        f"this personal access token reached its limit of {limit} calls a minute",
        details={
            "limit": limit,
            "window_seconds": int(RATE_WINDOW.total_seconds()),
            "retry_after": retry_after,
        },
        fix=wait(f"{retry_after} seconds pass", "get_my_work"),
    )


@dataclass(frozen=True)
class TokenRow:
    """One line of the tokens page: what it shows and whether the viewer may revoke it."""

    token: PersonalAccessToken
    owner: str
    live: bool
    expired: bool
    revoked_at: datetime | None


def tokens_for_seat(*, seat: Seat, now: datetime | None = None) -> list[TokenRow]:
    """The tokens the seat may see: its own, or, for owners and admins, the workspace's."""
    now = now or timezone.now()
    rows = PersonalAccessToken.objects.select_related("user", "connection").filter(workspace=seat.workspace)
    if not seat.can_manage:
        rows = rows.filter(user_id=seat.user_id)
    result = []
    for token in rows.order_by("-created_at", "-pk"):
        revoked_at = token.revoked_at or token.connection.revoked_at
        expired = token.expires_at is not None and token.expires_at <= now
        owner = token.user.email
        result.append(TokenRow(token, owner, revoked_at is None and not expired, expired, revoked_at))
    return result
