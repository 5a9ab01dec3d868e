"""Bearer tokens for /api/mcp: a DOT access token → its live agent connection.

Checked here: the token exists (found by its SHA-256, the only form the database keeps) and has
not expired, its connection is live (revoking a connection stops its tokens at once), and — for
a token issued with RFC 8707 resource indicators — that one of them is exactly this MCP
endpoint. DOT skips that audience check for tokens issued without `resource`, so it is
enforced here. The SDK's middleware then refuses a missing `mcp` scope with 403.

A verified token is remembered for CACHE_SECONDS in this process (keyed by its SHA-256), so
most requests pass here without a database query or a thread hop. The SDK still checks the
token's expiry on every request. Every tool call re-checks its connection in the database
(`accounts.connections.connection_live`), so a revoked connection or a lost seat stops the next
call at once in every process. In this process, revoking a connection or deleting a token or a
seat also empties the cache, so the token gets 401 on its very next request. Only in another
process may a token revoked on its own (RFC 7009 revocation, a refresh rotating it out) keep
working until its entry expires: at most CACHE_SECONDS.
"""

from __future__ import annotations

import hmac
import threading
import time
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections, transaction
from django.db.models.signals import post_delete, post_save
from mcp.server.auth.provider import AccessToken
from oauth2_provider.models import AccessToken as OAuthAccessToken

from accounts.connections import connection_for_token, token_checksum
from accounts.models import AgentConnection, Seat

CACHE_SECONDS = 30.0
CACHE_MAX_ENTRIES = 10_000


class VerifiedTokens:
    """Verified tokens by checksum, each for `ttl` seconds; emptied whenever a grant may have ended.

    `generation` moves on every clear: a verification that began before a clear is not stored
    after it, so a revocation racing a slow lookup cannot leave a live entry behind.
    """

    def __init__(self, ttl: float = CACHE_SECONDS, max_entries: int = CACHE_MAX_ENTRIES) -> None:
        self.ttl = ttl
        self.max_entries = max_entries
        self.generation = 0
        self._entries: dict[str, tuple[float, AccessToken]] = {}
        self._lock = threading.Lock()

    def get(self, checksum: str) -> AccessToken | None:
        entry = self._entries.get(checksum)
        if entry is None:
            return None
        if entry[0] <= time.monotonic():
            with self._lock:
                self._entries.pop(checksum, None)
            return None
        return entry[1]

    def put(self, checksum: str, token: AccessToken, generation: int) -> None:
        now = time.monotonic()
        with self._lock:
            if generation != self.generation:
                return
            if len(self._entries) >= self.max_entries:
                self._entries = {k: v for k, v in self._entries.items() if v[0] > now}
                while len(self._entries) >= self.max_entries:
                    del self._entries[next(iter(self._entries))]
            self._entries[checksum] = (now + self.ttl, token)

    def clear(self) -> None:
        with self._lock:
            self.generation += 1
            self._entries.clear()


verified_tokens = VerifiedTokens()


def _grant_changed(**_: Any) -> None:
    """A connection saved or deleted, a token or a seat deleted: forget every verified token.

    Cleared now and again after the writer's transaction commits, so a lookup that read the
    old rows in between is not kept either.
    """
    verified_tokens.clear()
    transaction.on_commit(verified_tokens.clear)


post_save.connect(_grant_changed, sender=AgentConnection, dispatch_uid="weft.mcp.connection_saved")
post_delete.connect(_grant_changed, sender=AgentConnection, dispatch_uid="weft.mcp.connection_deleted")
post_delete.connect(_grant_changed, sender=OAuthAccessToken, dispatch_uid="weft.mcp.token_deleted")
post_delete.connect(_grant_changed, sender=Seat, dispatch_uid="weft.mcp.seat_deleted")

# The client id the test-only fixed token reports (settings.WEFT_MCP_TEST_TOKEN).
TEST_CLIENT_ID = "weft-test-token"


def audience_is_mcp(resource: list[str]) -> bool:
    """RFC 8707: a token issued for resources must name this MCP endpoint exactly (one trailing / aside).

    Never a prefix: the bare origin, /api/mcp-evil or /api/mcp/other are other resources.
    """
    if not resource:
        return True
    ours = settings.WEFT_MCP_URL
    return any(r in (ours, f"{ours}/") for r in resource)


def verify(token: str) -> AccessToken | None:
    """The MCP view of a bearer token, or None when it must be refused with 401."""
    test_token = settings.WEFT_MCP_TEST_TOKEN
    if test_token and hmac.compare_digest(token.encode(), test_token.encode()):
        return AccessToken(
            token=token, client_id=TEST_CLIENT_ID, scopes=["mcp"], resource=settings.WEFT_MCP_URL
        )
    close_old_connections()
    try:
        return _verified(token)
    finally:
        close_old_connections()


def _verified(token: str) -> AccessToken | None:
    """The token's grant on the caller's own database connection, or None."""
    info = connection_for_token(token)
    if info is None or not audience_is_mcp(info.resource):
        return None
    return AccessToken(
        token=token,
        client_id=info.client_id,
        scopes=info.scopes,
        expires_at=int(info.expires_at.timestamp()),
        resource=settings.WEFT_MCP_URL,
        subject=str(info.connection.user_id),
        claims={
            "iss": settings.WEFT_BASE_URL,
            "connection_id": info.connection.pk,
            "workspace_id": info.connection.workspace_id,
        },
    )


def verify_in_request(token: str) -> AccessToken | None:
    """The same check and cache for a caller inside a Django request (the REST API), whose
    database connection Django manages; None also for an expired token."""
    checksum = token_checksum(token)
    verified = verified_tokens.get(checksum)
    if verified is None:
        generation = verified_tokens.generation
        verified = _verified(token)
        if verified is not None:
            verified_tokens.put(checksum, verified, generation)
    if verified is None or (verified.expires_at is not None and verified.expires_at < int(time.time())):
        return None
    return verified


class ConnectionTokenVerifier:
    """The SDK's TokenVerifier protocol over `verify`, with the verified-token cache in front."""

    async def verify_token(self, token: str) -> AccessToken | None:
        checksum = token_checksum(token)
        cached = verified_tokens.get(checksum)
        if cached is not None:
            return cached
        generation = verified_tokens.generation
        verified = await sync_to_async(verify, thread_sensitive=False)(token)
        if verified is not None:
            verified_tokens.put(checksum, verified, generation)
        return verified
