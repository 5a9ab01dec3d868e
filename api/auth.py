"""Who calls the REST API: the agents' OAuth bearer tokens, and people's personal access tokens.

OAuth tokens are the same as /api/mcp's and the event stream's, checked by the MCP server's
verifier (the same audience, expiry and live-connection checks, the same verified-token cache).
Personal access tokens (`wpat_…`, accounts/tokens.py) act through their own agent connection.
A caller is an `ApiCaller`: the connection the token belongs to and its workspace, which every
lookup is scoped by. Each kind of credential is a DRF authentication class in `AUTHENTICATION`
that returns an `ApiCaller`; nothing else in the API reads the credential.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication
from rest_framework.request import Request

from accounts.models import PersonalAccessToken
from accounts.tokens import pat_resolve
from weft.mcp.verifier import verify_in_request

REQUIRED_SCOPE = "mcp"


@dataclass(frozen=True)
class ApiCaller:
    """An authenticated REST caller: an agent connection in its workspace.

    `credential` names who holds the credential, for what is kept per caller (idempotency keys).
    """

    connection_id: int
    workspace_id: int
    # The personal access token of the call, whose calls are rate limited; None for OAuth tokens.
    token_id: int | None = None

    @property
    def credential(self) -> str:
        return f"connection:{self.connection_id}"


class InvalidToken(exceptions.AuthenticationFailed):
    """A bearer token was sent but is unknown, expired, revoked or for another audience."""


class InsufficientScope(exceptions.PermissionDenied):
    default_detail = f"the token lacks the {REQUIRED_SCOPE!r} scope"


def challenge(error: str | None) -> str:
    """The bearer challenge of /api/mcp's protected resource: the same tokens, the same sign-in."""
    metadata = f"{settings.WEFT_BASE_URL}/.well-known/oauth-protected-resource/api/mcp"
    parts = ['Bearer realm="weft"']
    if error:
        parts.append(f'error="{error}"')
    parts.append(f'resource_metadata="{metadata}"')
    return ", ".join(parts)


def bearer(request: Request) -> str | None:
    """The bearer token of the request; None without an Authorization header."""
    header = request.META.get("HTTP_AUTHORIZATION", "")
    if not header:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise InvalidToken("the Authorization header is not a bearer token")
    return token.strip()


class PersonalTokenAuthentication(BaseAuthentication):
    """`Authorization: Bearer wpat_…`: a person's access token; other bearer tokens pass on."""

    def authenticate(self, request: Request) -> tuple[Any, ApiCaller] | None:
        token = bearer(request)
        if token is None or not token.startswith(PersonalAccessToken.PREFIX):
            return None
        found = pat_resolve(token)
        if found is None:
            raise InvalidToken("the personal access token is unknown, expired or revoked")
        caller = ApiCaller(
            connection_id=found.connection_id, workspace_id=found.workspace_id, token_id=found.pk
        )
        return None, caller

    def authenticate_header(self, request: Request) -> str:
        return challenge(None)


class AgentTokenAuthentication(BaseAuthentication):
    """`Authorization: Bearer <OAuth access token>` of an agent connection."""

    def authenticate(self, request: Request) -> tuple[Any, ApiCaller] | None:
        token = bearer(request)
        if token is None:
            return None
        verified = verify_in_request(token)
        claims = verified.claims or {} if verified is not None else {}
        connection_id, workspace_id = claims.get("connection_id"), claims.get("workspace_id")
        if verified is None or not isinstance(connection_id, int) or not isinstance(workspace_id, int):
            raise InvalidToken("the token is unknown, expired, revoked or for another resource")
        if REQUIRED_SCOPE not in verified.scopes:
            raise InsufficientScope
        return None, ApiCaller(connection_id=connection_id, workspace_id=workspace_id)

    def authenticate_header(self, request: Request) -> str:
        return challenge(None)


# The credential kinds the API accepts, tried in order.
AUTHENTICATION: list[type[BaseAuthentication]] = [PersonalTokenAuthentication, AgentTokenAuthentication]
