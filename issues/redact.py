"""Redaction of personal data and secrets before an issue or message is stored.

Pure: no ORM, no settings. `redact(text, salt=...)` replaces every finding with a typed
placeholder such as `<EMAIL:a3f9>`; the same value gives the same placeholder within one
submission (one salt), and another submission (another salt) gives another placeholder.

`python -m issues.redact` reads one text on standard input and prints the redacted text.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class Redacted:
    text: str
    kinds: tuple[str, ...]  # the distinct kinds found, sorted


def new_salt() -> str:
    return secrets.token_hex(8)


def placeholder(kind: str, value: str, salt: str) -> str:
    digest = hashlib.blake2s(f"{salt}\x00{value}".encode(), digest_size=2).hexdigest()
    return f"<{kind}:{digest}>"


_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")


def redact(text: str, *, salt: str) -> Redacted:
    found: set[str] = set()

    def _sub(match: re.Match[str]) -> str:
        found.add("EMAIL")
        return placeholder("EMAIL", match.group(0), salt)

    return Redacted(_EMAIL.sub(_sub, text), tuple(sorted(found)))


if __name__ == "__main__":  # pragma: no cover - exercised by a subprocess test
    sys.stdout.write(redact(sys.stdin.read(), salt=new_salt()).text)
