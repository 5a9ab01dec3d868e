"""Bearer tokens for /api/mcp: a DOT access token → its live agent connection.

Checked here: the token exists and has not expired, its connection is live (revoking a
connection stops its tokens at once), and — for a token issued with RFC 8707 resource
indicators — that one of them is this MCP endpoint. DOT skips that audience check for tokens
issued without `resource`, so it is enforced here. The SDK's middleware then refuses a
missing `mcp` scope with 403.
"""

from __future__ import annotations

import hmac

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections
from mcp.server.auth.provider import AccessToken

from accounts.connections import connection_for_token, token_allows_mcp

# The client id the test-only fixed token reports (settings.WEFT_MCP_TEST_TOKEN).
TEST_CLIENT_ID = "weft-test-token"


def verify(token: str) -> AccessToken | None:
    """The MCP view of a bearer token, or None when it must be refused with 401."""
    test_token = settings.WEFT_MCP_TEST_TOKEN
    if test_token and hmac.compare_digest(token.encode(), test_token.encode()):
        return AccessToken(
            token=token, client_id=TEST_CLIENT_ID, scopes=["mcp"], resource=settings.WEFT_MCP_URL
        )
    close_old_connections()
    try:
        info = connection_for_token(token)
        if info is None or not token_allows_mcp(info):
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
    finally:
        close_old_connections()


class ConnectionTokenVerifier:
    """The SDK's TokenVerifier protocol over `verify`."""

    async def verify_token(self, token: str) -> AccessToken | None:
        return await sync_to_async(verify, thread_sensitive=False)(token)
