"""Redaction of personal data and secrets before an issue or message is stored.

Pure: no ORM, no settings. `redact(text, salt=...)` replaces every finding with a typed
placeholder such as `<EMAIL:a3f9>`; the same value gives the same placeholder within one
submission (one salt), and another submission (another salt) gives another placeholder.
What is found, and what is never redacted, is in issues/redact_patterns.py and docs/redaction.md.

`python -m issues.redact` reads one text on standard input and prints the redacted text.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import sys
from dataclasses import dataclass

from issues.redact_patterns import PLACEHOLDER, RULES, Rule, secret_of


@dataclass(frozen=True)
class Redacted:
    text: str
    kinds: tuple[str, ...]  # the distinct kinds found, sorted


def new_salt() -> str:
    return secrets.token_hex(8)


def placeholder(kind: str, value: str, salt: str) -> str:
    digest = hashlib.blake2s(f"{salt}\x00{value}".encode(), digest_size=2).hexdigest()
    return f"<{kind}:{digest}>"


def _in_placeholder(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] overlaps a placeholder: those are never redacted again."""
    window = PLACEHOLDER.finditer(text, max(0, start - 40), end + 40)
    return any(found.start() < end and start < found.end() for found in window)


def _apply(rule: Rule, text: str, salt: str, found: set[str]) -> str:
    """One rule over the text: each confirmed candidate's secret becomes its placeholder."""

    def _sub(match: re.Match[str]) -> str:
        whole = match.group(0)
        if rule.check is not None and not rule.check(match):
            return whole
        start, end = secret_of(match, rule.groups)
        if _in_placeholder(match.string, start, end):
            return whole
        value = match.string[start:end]
        found.add(rule.kind)
        offset = match.start()
        return whole[: start - offset] + placeholder(rule.kind, value, salt) + whole[end - offset :]

    return rule.pattern.sub(_sub, text)


def redact(text: str, *, salt: str) -> Redacted:
    found: set[str] = set()
    for rule in RULES:
        if not rule.needles or any(needle in text for needle in rule.needles):
            text = _apply(rule, text, salt, found)
    return Redacted(text, tuple(sorted(found)))


if __name__ == "__main__":  # pragma: no cover - exercised by a subprocess test
    sys.stdout.write(redact(sys.stdin.read(), salt=new_salt()).text)
