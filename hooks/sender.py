"""One webhook attempt over HTTP: sign, send to the checked address, time it.

The host is resolved and checked again at send time (it may have changed since subscribe), and
the request goes to that address: the URL carries the IP, the Host header and the TLS server
name (SNI, and so certificate verification) carry the host name. Redirects are not followed,
and the response body is never read (only its status counts).

Every attempt ends within DEADLINE_SECONDS in all: per-operation timeouts alone let a receiver
that drips one byte of its headers every few seconds hold a sender for hours, so every read and
write on the connection is given only what is left of the attempt's deadline (`Deadline`).
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import httpcore
import httpx

from hooks import addresses, signing
from hooks.rules import FilterError

TIMEOUT_SECONDS = 5.0
DEADLINE_SECONDS = 10.0
# What a failed attempt records: a timeout, or any other failure of the connection or protocol.
FAILURES = (
    httpcore.NetworkError,
    httpcore.ProtocolError,
    httpcore.UnsupportedProtocol,
    httpcore.PoolTimeout,
    ssl.SSLError,
    OSError,
)


@dataclass(frozen=True)
class Outcome:
    status: int | None
    error: str
    latency_ms: int


class _Bounded(httpcore.NetworkStream):
    """A connection whose every read and write gets at most what is left of the deadline."""

    def __init__(self, stream: httpcore.NetworkStream, deadline: float) -> None:
        self._stream = stream
        self._deadline = deadline

    def _left(self, timeout: float | None, error: type[Exception]) -> float:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise error("the attempt's deadline passed")
        return left if timeout is None else min(timeout, left)

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, self._left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, self._left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        left = self._left(timeout, httpcore.ConnectTimeout)
        return _Bounded(self._stream.start_tls(ssl_context, server_hostname, left), self._deadline)

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class Deadline(httpcore.SyncBackend):
    """The network backend of one attempt: connections that all end by `deadline` (monotonic)."""

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        left = max(0.001, self.deadline - time.monotonic())
        timeout = left if timeout is None else min(timeout, left)
        stream = super().connect_tcp(host, port, timeout, local_address, socket_options)
        return _Bounded(stream, self.deadline)


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
        "content-type": "application/json",
    }
    timeouts = {"connect": TIMEOUT_SECONDS, "read": TIMEOUT_SECONDS, "write": TIMEOUT_SECONDS}
    extensions: dict[str, Any] = {"timeout": timeouts}
    if target.scheme == "https":
        extensions["sni_hostname"] = target.host
    backend = Deadline(started + DEADLINE_SECONDS)
    try:
        with (
            httpcore.ConnectionPool(ssl_context=httpx.create_ssl_context(), network_backend=backend) as pool,
            pool.stream(
                "POST",
                target.pinned(address),
                headers=list(headers.items()),
                content=body.encode(),
                extensions=extensions,
            ) as response,
        ):
            status, error = response.status, ""
    except httpcore.TimeoutException:
        status, error = None, "timed out"
    except FAILURES as exc:
        status, error = None, f"{type(exc).__name__}: {exc}"
    return Outcome(status, error[:200], int((time.monotonic() - started) * 1000))
