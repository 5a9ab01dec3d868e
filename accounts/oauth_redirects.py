"""Which redirect URIs a client may register (OAuth 2.1 §2.3.1, RFC 8252 §7).

https to any host; http only to a loopback host (any port); the private-use schemes native MCP
clients use (`cursor`). Checked wherever Weft accepts redirect URIs: dynamic registration and its
RFC 7592 update, client-id metadata documents, the admin, and again at the authorization
endpoint for rows stored before the rule.
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit

from django.http import JsonResponse
from oauth2_provider.cimd import CIMDError, SafeMetadataFetcher

# Host names exactly as urlsplit() reports them (lower case, IPv6 without brackets).
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
PRIVATE_SCHEMES = frozenset({"cursor"})
MAX_LENGTH = 2000


def redirect_uri_problem(uri: str) -> str | None:
    """Why `uri` may not be registered as a redirect URI, or None when it may."""
    if not uri or len(uri) > MAX_LENGTH:
        return "is empty or too long"
    # Browsers read a backslash as a slash and drop tabs and newlines, so such a URI
    # can point somewhere other than what this parser sees.
    if any(ch.isspace() or ord(ch) < 0x20 or ch == "\\" for ch in uri):
        return "contains whitespace, control characters or a backslash"
    if "#" in uri:
        return "has a fragment"
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018 — raises ValueError on a malformed port
    except ValueError:
        return "is not a valid URI"
    scheme = parts.scheme
    if "@" in parts.netloc or "%" in parts.netloc:
        return "has user information or an encoded host"
    if scheme == "https":
        return None if parts.hostname else "has no host"
    if scheme == "http":
        if parts.hostname in LOOPBACK_HOSTS:
            return None
        return "uses http to a host that is not loopback (localhost, 127.0.0.1 or [::1]); use https"
    if scheme in PRIVATE_SCHEMES:
        return None
    return f"uses the scheme {scheme or '(none)'!r}, which is not allowed"


def first_refusal(uris: object) -> str | None:
    """The error description for the first unacceptable URI in a metadata list, or None."""
    if not isinstance(uris, list):
        return None  # DOT reports the wrong type itself
    for uri in uris:
        if not isinstance(uri, str):
            return None
        problem = redirect_uri_problem(uri)
        if problem is not None:
            return f"redirect_uri {uri!r} {problem}."
    return None


def refuse_registration(body: bytes) -> JsonResponse | None:
    """RFC 7591 §3.2.2 `invalid_redirect_uri` for a registration body naming a bad URI, else None."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None  # DOT answers invalid_client_metadata
    description = first_refusal(data.get("redirect_uris") if isinstance(data, dict) else None)
    if description is None:
        return None
    return JsonResponse({"error": "invalid_redirect_uri", "error_description": description}, status=400)


class RedirectCheckingMetadataFetcher(SafeMetadataFetcher):
    """CIMD: a client-id metadata document naming a bad redirect URI is refused like a broken one."""

    def fetch(self, client_id: str) -> tuple[dict[str, object], int]:
        metadata, max_age = super().fetch(client_id)
        description = first_refusal(metadata.get("redirect_uris"))
        if description is not None:
            raise CIMDError(description)
        return metadata, max_age
