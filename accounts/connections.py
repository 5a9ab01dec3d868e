"""Agent connections: binding an OAuth grant to a workspace, resolving tokens, revoking.

A connection is one OAuth client signed in by one user for one workspace (PRODUCT §1), so
the pair (application, user) names at most one live connection. The consent page creates or
re-points it; every token DOT issues to that pair — including the ones rotated out of a
refresh — belongs to it. That keeps DOT's token models untouched: no custom grant or token
model, no extra migration.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application, RefreshToken

from accounts.models import AgentConnection, PersonalAccessToken, Seat, User, Workspace
from boards import clock
from weft.events import emit

# last_used_at is a hint for people, not an audit log: write it at most once a minute.
LAST_USED_RESOLUTION = timedelta(minutes=1)


def connection_authorize(*, user: User, application: Application, workspace: Workspace) -> AgentConnection:
    """The live connection of this client and user, bound to `workspace` (created on first consent).

    Choosing another workspace for the same client ends the old connection and its tokens:
    a token must never change tenant under an agent that already holds it.
    """
    with transaction.atomic():
        now = clock.db_now()
        live = list(
            AgentConnection.objects.select_for_update().filter(
                application=application, user=user, revoked_at=None
            )
        )
        keep = next((c for c in live if c.workspace_id == workspace.pk), None)
        for other in live:
            if other is not keep:
                _end(other, now, reason="replaced")
        if keep is not None:
            if keep.name != application.name and application.name:
                keep.name = application.name[:255]
                keep.save(update_fields=["name"])
                _emit(keep, "connection.updated", fields=["name"])
            return keep
        return connection_create(
            user=user, workspace=workspace, name=application.name or "MCP client", application=application
        )


def connection_create(
    *, user: User, workspace: Workspace, name: str, application: Application | None = None
) -> AgentConnection:
    """A new live connection, in the caller's transaction (an OAuth client's, or a personal token's)."""
    created = AgentConnection.objects.create(
        workspace=workspace, user=user, application=application, name=name[:255], created_at=clock.db_now()
    )
    _emit(created, "connection.created", userId=user.pk, name=created.name)
    return created


def connection_revoke(*, connection: AgentConnection) -> None:
    """End a connection; its access and refresh tokens stop working at once."""
    with transaction.atomic():
        locked = AgentConnection.objects.select_for_update().get(pk=connection.pk)
        if locked.revoked_at is None:
            _end(locked, clock.db_now(), reason="disconnected")
    connection.refresh_from_db(fields=["revoked_at"])


def _emit(connection: AgentConnection, type: str, **payload: object) -> None:
    emit(
        workspace_id=connection.workspace_id,
        type=type,
        entity_type="connection",
        entity_id=connection.pk,
        payload={"connectionId": connection.pk, **payload},
    )


def _end(connection: AgentConnection, now: datetime, *, reason: str) -> None:
    """Revoke the connection and its tokens. `reason`: disconnected (by a person) or replaced (the
    same client and user consented for another workspace)."""
    connection.revoked_at = now
    connection.save(update_fields=["revoked_at"])
    _emit(connection, "connection.revoked", userId=connection.user_id, reason=reason)
    # A personal token lives and ends with its connection, whichever page revoked it.
    PersonalAccessToken.objects.filter(connection=connection, revoked_at=None).update(revoked_at=now)
    if connection.application_id is None:
        return
    pair = {"application_id": connection.application_id, "user_id": connection.user_id}
    RefreshToken.objects.filter(**pair, revoked__isnull=True).update(revoked=now, updated=now)
    AccessToken.objects.filter(**pair).delete()


@dataclass(frozen=True)
class TokenInfo:
    """What an access token grants: its connection, scopes, expiry and audience."""

    connection: AgentConnection
    client_id: str
    scopes: list[str]
    expires_at: datetime
    resource: list[str]


def connection_for_token(token: str, *, now: datetime | None = None) -> TokenInfo | None:
    """The live connection behind a bearer token, or None (unknown, expired, revoked or unbound).

    Token expiry is django-oauth-toolkit's, which issues and checks `expires` by this server's
    clock, so this compares with the same clock (and last_used_at is a hint, not a record).
    """
    now = now or timezone.now()
    checksum = token_checksum(token)
    access = (
        AccessToken.objects.select_related("application")
        .filter(token_checksum=checksum, expires__gt=now)
        .first()
    )
    if access is None or access.application_id is None or access.user_id is None:
        return None
    connection = (
        AgentConnection.objects.select_related("workspace", "workspace__plan", "user")
        .filter(application_id=access.application_id, user_id=access.user_id, revoked_at=None)
        .first()
    )
    if connection is None:
        return None
    # A person who lost the seat loses the agent's access with it.
    if not connection.workspace.seats.filter(user_id=connection.user_id).exists():
        return None
    if connection.last_used_at is None or connection.last_used_at < now - LAST_USED_RESOLUTION:
        AgentConnection.objects.filter(pk=connection.pk).update(last_used_at=now)
        connection.last_used_at = now
    assert access.application is not None
    return TokenInfo(
        connection=connection,
        client_id=access.application.client_id,
        scopes=access.scope.split(),
        expires_at=access.expires,
        resource=list(access.resource or []),
    )


def token_checksum(token: str) -> str:
    """How DOT stores an access token: its SHA-256, hex."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def connection_live(*, connection_id: int) -> AgentConnection | None:
    """The connection for one agent call, with its workspace and plan, or None if it ended.

    One query on every tool call: the connection is not revoked and its user still holds a seat
    in its workspace. So revoking a connection or removing a person stops the next call at
    once, in every process, whatever a token verifier may have cached.
    """
    seat = Seat.objects.filter(workspace_id=OuterRef("workspace_id"), user_id=OuterRef("user_id"))
    rows = AgentConnection.objects.select_related("workspace", "workspace__plan").filter(
        Exists(seat), pk=connection_id, revoked_at=None
    )
    return next(iter(rows), None)


def token_allows_mcp(info: TokenInfo) -> bool:
    """RFC 8707 audience check: a token issued for a resource must name this MCP endpoint."""
    if not info.resource:
        return True
    ours = settings.WEFT_MCP_URL.rstrip("/")
    return any(r.rstrip("/") == ours for r in info.resource)


def connections_for_user(*, user: User) -> list[AgentConnection]:
    return list(
        AgentConnection.objects.select_related("workspace", "application")
        .filter(user=user, revoked_at=None, workspace__seats__user=user)
        .order_by("-last_used_at", "-created_at")
    )
