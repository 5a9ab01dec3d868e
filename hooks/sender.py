"""One webhook attempt over HTTP: sign, send to the checked address, time it.

The host is resolved and checked again at send time (it may have changed since subscribe), and
the request goes to that address: the URL carries the IP, the Host header and the TLS server
name (SNI, and so certificate verification) carry the host name. Redirects are not followed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import httpx

from hooks import addresses, signing
from hooks.rules import FilterError

TIMEOUT_SECONDS = 5.0


@dataclass(frozen=True)
class Outcome:
    status: int | None
    error: str
    latency_ms: int


def send(*, url: str, secret: str, message_id: str, body: str, timestamp: int, debug: bool) -> Outcome:
    """POST `body` to `url` once; never raises: a refusal, timeout or connection error is an Outcome."""
    started = time.monotonic()
    try:
        target = addresses.target(url, debug=debug)
        address = addresses.resolve(target.host, target.port, allow_private=debug)
    except FilterError as refused:
        return Outcome(None, f"refused: {refused.reason}"[:200], 0)
    headers = {
        **signing.headers(secret=secret, message_id=message_id, timestamp=timestamp, body=body),
        "host": target.host_header,
        "user-agent": "Weft-Webhooks/1",
    }
    extensions = {"sni_hostname": target.host} if target.scheme == "https" else {}
    try:
        with httpx.Client(timeout=httpx.Timeout(TIMEOUT_SECONDS), trust_env=False) as client:
            response = client.post(
                target.pinned(address), content=body.encode(), headers=headers, extensions=extensions
            )
        status, error = response.status_code, ""
    except httpx.TimeoutException:
        status, error = None, "timed out"
    except httpx.HTTPError as exc:
        status, error = None, f"{type(exc).__name__}: {exc}"
    return Outcome(status, error[:200], int((time.monotonic() - started) * 1000))
