"""`weft login` in the browser: the OAuth 2.0 device authorization grant (RFC 8628) against Weft.

The CLI asks for a code pair as the public client `weft-cli`, prints where to enter the code,
and polls the token endpoint at the interval the server names until the person allows or denies
it there, or the code expires. The access token lasts an hour; a 401 spends the refresh token
once for a new pair (`refresh`). `revoke` ends both at logout (RFC 7009).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Any, TextIO

import httpx

CLIENT_ID = "weft-cli"
SCOPE = "mcp"
DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
SLOW_DOWN_SECONDS = 5  # RFC 8628 §3.5: each slow_down adds five seconds to the interval


class LoginFailed(Exception):
    """The device was denied, its code expired, or the server refused the request."""

    def __init__(self, error: str, description: str) -> None:
        super().__init__(f"{error}: {description}")
        self.error, self.description = error, description


@dataclass(frozen=True)
class Tokens:
    access_token: str
    refresh_token: str | None


def _form(http: httpx.Client, path: str, data: dict[str, str]) -> tuple[int, dict[str, Any]]:
    response = http.post(path, data=data)
    try:
        body = response.json()
    except ValueError:
        body = {}
    if not isinstance(body, dict):
        body = {}
    return response.status_code, body


def _failed(body: dict[str, Any], status: int) -> LoginFailed:
    return LoginFailed(str(body.get("error") or f"http_{status}"), str(body.get("error_description") or ""))


def device_login(base_url: str, *, out: TextIO = sys.stderr, timeout: float = 30.0) -> Tokens:
    """Sign in through the browser; prints the code and the page to `out` while it waits."""
    with httpx.Client(base_url=base_url, timeout=timeout) as http:
        status, pair = _form(http, "/o/device-authorization/", {"client_id": CLIENT_ID, "scope": SCOPE})
        if status != 200 or "device_code" not in pair:
            raise _failed(pair, status)
        page = pair.get("verification_uri_complete") or pair["verification_uri"]
        print(f"Open {page} and enter the code {pair['user_code']}", file=out, flush=True)
        interval = float(pair.get("interval") or 5)
        deadline = time.monotonic() + float(pair.get("expires_in") or 600)
        data = {"grant_type": DEVICE_GRANT, "device_code": pair["device_code"], "client_id": CLIENT_ID}
        while time.monotonic() < deadline:
            time.sleep(interval)
            status, body = _form(http, "/o/token/", data)
            if status == 200 and body.get("access_token"):
                return Tokens(str(body["access_token"]), body.get("refresh_token"))
            error = body.get("error")
            if error == "slow_down":
                interval += SLOW_DOWN_SECONDS
            elif error != "authorization_pending":
                raise _failed(body, status)
            print(".", end="", file=out, flush=True)
        raise LoginFailed("expired_token", "the code expired before it was approved")


def refresh(base_url: str, refresh_token: str, *, timeout: float = 30.0) -> Tokens | None:
    """A new pair for the refresh token, or None when it is spent, revoked or expired."""
    with httpx.Client(base_url=base_url, timeout=timeout) as http:
        status, body = _form(
            http,
            "/o/token/",
            {"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": CLIENT_ID},
        )
    if status != 200 or not body.get("access_token"):
        return None
    return Tokens(str(body["access_token"]), body.get("refresh_token"))


def revoke(base_url: str, tokens: Tokens, *, timeout: float = 30.0) -> bool:
    """Revoke the refresh token (its access tokens go with it) and the access token; True when
    the server confirmed both (RFC 7009 answers 200 for a token it no longer knows, too)."""
    confirmed = True
    with httpx.Client(base_url=base_url, timeout=timeout) as http:
        pairs = [(tokens.refresh_token, "refresh_token"), (tokens.access_token, "access_token")]
        for token, hint in pairs:
            if token:
                status, _ = _form(
                    http,
                    "/o/revoke_token/",
                    {"token": token, "token_type_hint": hint, "client_id": CLIENT_ID},
                )
                confirmed = confirmed and status == 200
    return confirmed
