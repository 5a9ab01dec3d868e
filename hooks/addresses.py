"""Where a webhook may go: https URLs to public addresses (SSRF guard).

`target()` and `refusal()` are pure. `resolve()` asks the resolver once and checks every
address it answers; the sender then connects to that checked address, so a second lookup
cannot swap in a private one (DNS rebinding). In debug, http to loopback hosts is allowed and
no address is refused, so a developer can point a subscription at a local receiver.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from hooks.rules import URL, FilterError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[..., list[tuple[Any, ...]]]
LOOPBACK_NAMES = {"localhost"}


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str
    port: int
    path: str

    def pinned(self, address: str) -> str:
        """The URL with the host replaced by the checked address."""
        shown = f"[{address}]" if ":" in address else address
        return f"{self.scheme}://{shown}:{self.port}{self.path}"

    @property
    def host_header(self) -> str:
        default = 443 if self.scheme == "https" else 80
        shown = f"[{self.host}]" if ":" in self.host else self.host
        return shown if self.port == default else f"{shown}:{self.port}"


def _literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def is_loopback_host(host: str) -> bool:
    address = _literal(host)
    return host.lower() in LOOPBACK_NAMES or (address is not None and address.is_loopback)


def target(url: str, *, debug: bool) -> Target:
    """The parts of a subscription URL; FilterError when it is not one Weft sends to."""
    if len(url) > URL:
        raise FilterError("url", f"at most {URL} characters")
    url = url.strip()
    if not all("!" <= char <= "~" for char in url):
        # urlsplit keeps NUL and spaces and drops tabs and newlines: refuse them all rather than
        # store one URL and send to another (a NUL cannot even be stored on PostgreSQL).
        raise FilterError(
            "url", "must be printable ASCII without spaces (IDNA for the host, %-escapes for the rest)"
        )
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise FilterError("url", "is not a valid URL") from None
    host = (parts.hostname or "").lower()
    if parts.scheme not in {"https", "http"} or not host:
        raise FilterError("url", "must be an https URL with a host")
    if parts.username is not None or parts.password is not None:
        raise FilterError("url", "must not carry a user name or password")
    if parts.scheme == "http" and not (debug and is_loopback_host(host)):
        raise FilterError("url", "must use https (http only for loopback hosts in debug)")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Target(parts.scheme, host, port or (443 if parts.scheme == "https" else 80), path)


def refusal(address: IPAddress) -> str | None:
    """What kind of address Weft never sends to `address` is ("a loopback address"); None when public."""
    mapped = getattr(address, "ipv4_mapped", None)
    if mapped is not None:
        return refusal(mapped)
    for kind in ("loopback", "private", "link_local", "multicast", "unspecified", "reserved"):
        if getattr(address, f"is_{kind}"):
            return f"a {kind.replace('_', '-')} address"
    if not address.is_global:
        return "not a public address"
    return None


def resolve(host: str, port: int, *, allow_private: bool, resolver: Resolver | None = None) -> str:
    """One checked address of `host`; FilterError when it does not resolve or any answer is private."""
    literal = _literal(host)
    if literal is not None:
        found: list[IPAddress] = [literal]
    else:
        lookup = resolver or socket.getaddrinfo
        try:
            answers = lookup(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError):
            raise FilterError("url", f"the host {host} does not resolve") from None
        found = [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in answers]
        if not found:
            raise FilterError("url", f"the host {host} does not resolve")
    if not allow_private:
        for address in found:
            reason = refusal(address)
            if reason is not None:
                raise FilterError(
                    "url", f"{host} resolves to {address}, {reason}; webhooks go to public addresses only"
                )
    return str(found[0])
