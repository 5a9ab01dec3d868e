"""Redaction of personal data and secrets before an issue or message is stored.

Pure: no ORM, no settings. `redact(text, salt=...)` replaces every finding with a typed
placeholder such as `<EMAIL:a3f9>`; the same value gives the same placeholder within one
submission (one salt), and another submission (another salt) gives another placeholder.
What is found, and what is never redacted, is in issues/redact_patterns.py and docs/redaction.md.

One pass of a combined anchor pattern finds where a finding may be; each rule's own pattern then
runs only near its anchors, which keeps a 1 MB body well under 50 ms (bench/redact.py).

`python -m issues.redact` reads one text on standard input and prints the redacted text.
"""

from __future__ import annotations

import bisect
import hashlib
import re
import secrets
import sys
from collections.abc import Iterator
from dataclasses import dataclass

from issues.redact_patterns import ANCHORS, PLACEHOLDER, RULES, SHAPE_TABLE, SHAPES, Rule, secret_of


@dataclass(frozen=True)
class Redacted:
    text: str
    kinds: tuple[str, ...]  # the distinct kinds found, sorted


def new_salt() -> str:
    return secrets.token_hex(8)


def placeholder(kind: str, value: str, salt: str) -> str:
    digest = hashlib.blake2s(f"{salt}\x00{value}".encode(), digest_size=2).hexdigest()
    return f"<{kind}:{digest}>"


_ANCHOR = re.compile("|".join(f"{source}(?P<a{i}>)" for i, (source, _) in enumerate(ANCHORS)), re.ASCII)
_ANCHORED = {f"a{i}": rules for i, (_, rules) in enumerate(ANCHORS)}
_PRIORITY = {rule: rank for rank, rule in enumerate(RULES)}

# A finding: its rule's rank, then the span of the secret in the text.
Finding = tuple[int, int, int]


def _near(rule: Rule, text: str, at: int) -> Finding | None:
    """The rule's finding that covers position `at`, searched only in the window around it."""
    end = min(len(text), at + rule.reach)
    for match in rule.pattern.finditer(text, max(0, at - rule.back), end):
        if match.start() > at:
            return None
        if match.end() == end < len(text):  # cut by the window: match again on the whole text
            match = rule.pattern.match(text, match.start()) or match
        if match.end() > at and (rule.check is None or rule.check(match)):
            return (_PRIORITY[rule], *secret_of(match, rule.groups))
    return None


def _anchored(text: str) -> Iterator[Finding]:
    for anchor in _ANCHOR.finditer(text):
        for rule in _ANCHORED[anchor.lastgroup or ""]:
            found = _near(rule, text, anchor.start())
            if found is not None:
                yield found


def _shaped(text: str) -> Iterator[Finding]:
    """Cards and IBANs: where the text's shape (digits as 9, capitals as A) has their form."""
    shape = text.encode("ascii", "replace").translate(SHAPE_TABLE)  # one byte per character
    for form, rule in SHAPES:
        at = shape.find(form)
        while at != -1:
            match = rule.pattern.match(text, at)
            if match is not None and (rule.check is None or rule.check(match)):
                yield (_PRIORITY[rule], *match.span())
                at = match.end()
            else:
                at += 1
            at = shape.find(form, at)


def _overlaps(taken: list[tuple[int, int]], start: int, end: int) -> bool:
    """Whether [start, end) overlaps one of the sorted, disjoint spans in `taken`."""
    index = bisect.bisect_left(taken, (start, end))
    return (index > 0 and taken[index - 1][1] > start) or (index < len(taken) and taken[index][0] < end)


def _kept(text: str, findings: set[Finding]) -> list[Finding]:
    """The findings to replace: by precedence, none overlapping another or a placeholder."""
    taken = [found.span() for found in PLACEHOLDER.finditer(text)]
    kept: list[Finding] = []
    for finding in sorted(findings):
        _, start, end = finding
        if start < end and not _overlaps(taken, start, end):
            bisect.insort(taken, (start, end))
            kept.append(finding)
    return sorted(kept, key=lambda finding: finding[1])


def redact(text: str, *, salt: str) -> Redacted:
    findings = set(_anchored(text)) | set(_shaped(text))
    pieces: list[str] = []
    kinds: set[str] = set()
    done = 0
    for rank, start, end in _kept(text, findings):
        kind = RULES[rank].kind
        kinds.add(kind)
        pieces += (text[done:start], placeholder(kind, text[start:end], salt))
        done = end
    pieces.append(text[done:])
    return Redacted("".join(pieces), tuple(sorted(kinds)))


if __name__ == "__main__":  # pragma: no cover - exercised by a subprocess test
    sys.stdout.write(redact(sys.stdin.read(), salt=new_salt()).text)
