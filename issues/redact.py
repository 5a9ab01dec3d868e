"""Redaction of personal data and secrets before an issue or message is stored.

Pure: no ORM, no settings. `redact(text, salt=...)` replaces every finding with a typed
placeholder such as `<EMAIL:a3f9>`; the same value gives the same placeholder within one
submission (one salt), and another submission (another salt) gives another placeholder.
What is found, and what is never redacted, is in issues/redact_patterns.py and docs/redaction.md.

One pass of a combined anchor pattern finds where a finding may be; each rule's own pattern then
runs only where its anchors say a finding may start, which keeps a 1 MB body well under 50 ms
(bench/redact.py) and any input linear.

`python -m issues.redact` reads one text on standard input and prints the redacted text.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import operator
import re
import secrets
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from issues.redact_patterns import ANCHORS, PLACEHOLDER, RULES, SHAPE_TABLE, SHAPES, Rule, Try, secret_of


@dataclass(frozen=True)
class Redacted:
    text: str
    kinds: tuple[str, ...]  # the distinct kinds found, sorted


def new_salt() -> str:
    return secrets.token_hex(8)


def placeholder(kind: str, value: str, salt: str) -> str:
    digest = hashlib.blake2s(f"{salt}\x00{value}".encode(), digest_size=2).hexdigest()
    return f"<{kind}:{digest}>"


def _anchor_pattern() -> re.Pattern[str]:  # pragma: no mutate block - runs at import only
    """ANCHORS as one pattern: one alternative per first character, so the engine skips ahead to
    those characters and, at each, tries only the anchors that start with it."""
    by_first: dict[str, list[str]] = {}
    for i, (source, _) in enumerate(ANCHORS):
        first = source[:2] if source.startswith("\\") else source[:1]
        by_first.setdefault(first, []).append(f"{source[len(first) :]}(?P<a{i}>)")
    return re.compile(
        "|".join(f"{first}(?:{'|'.join(rests)})" for first, rests in by_first.items()), re.ASCII
    )


_ANCHOR = _anchor_pattern()
_ANCHORED = {f"a{i}": tries for i, (_, tries) in enumerate(ANCHORS)}
_PRIORITY = {rule: rank for rank, rule in enumerate(RULES)}

# A finding: its rule's rank, then the span of the secret in the text.
Finding = tuple[int, int, int]


def _confirmed(rule: Rule, match: re.Match[str] | None) -> Finding | None:
    if match is None or (rule.check is not None and not rule.check(match)):
        return None
    return (_PRIORITY[rule], *secret_of(match, rule.groups))


def _at(attempt: Try, text: str, reverse: str, at: int) -> Finding | None:
    """The rule's finding at an anchor: its pattern matched at each start its heads give."""
    for head in attempt.heads:
        before = head.match(reverse, len(text) - at)
        start = at - (before.end() - before.start()) if before else at
        match = attempt.rule.pattern.match(text, start)
        if match is not None and match.end() > at:
            return _confirmed(attempt.rule, match)
    return None


def _anchored(text: str) -> Iterator[Finding]:
    reverse = text[::-1]  # the heads read backwards from an anchor, as a forward match here
    covered: dict[Rule, int] = {}  # an anchor inside a rule's last finding is not tried again
    for anchor in _ANCHOR.finditer(text):
        at = anchor.start()
        for attempt in _ANCHORED[anchor.lastgroup or ""]:
            if at < covered.get(attempt.rule, 0):
                continue
            found = _at(attempt, text, reverse, at)
            if found is not None:
                covered[attempt.rule] = found[2]
                yield found


_RUN = re.compile(rb"9+|A+|.")  # what to skip after a failed shape: the rest of its digit run


def _shaped(text: str) -> Iterator[Finding]:
    """Cards and IBANs: where the text's shape (digits as 9, capitals as A) has their form."""
    shape = text.encode("ascii", "replace").translate(SHAPE_TABLE)  # one byte per character
    for form, rule in SHAPES:
        at = shape.find(form)
        while at != -1:
            found = _confirmed(rule, rule.pattern.match(text, at))
            if found is not None:
                yield found
                at = found[2]
            else:  # neither can start inside a run of digits or capitals: skip the run
                run = _RUN.match(shape, at)
                at = run.end() if run else at + 1
            at = shape.find(form, at)


def _overlaps(taken: list[tuple[int, int]], start: int, end: int) -> bool:
    """Whether [start, end) overlaps one of the sorted, disjoint spans in `taken`."""
    index = bisect.bisect_left(taken, (start, end))
    return (index > 0 and taken[index - 1][1] > start) or (index < len(taken) and taken[index][0] < end)


def _kept(text: str, findings: Iterable[Finding]) -> list[Finding]:
    """The findings to replace: by precedence, none overlapping another or a placeholder."""
    by_rank: dict[int, list[Finding]] = {}
    for finding in findings:  # nearly in order already: the sorts below are close to linear
        by_rank.setdefault(finding[0], []).append(finding)
    taken = [found.span() for found in PLACEHOLDER.finditer(text)]  # sorted and disjoint
    kept: list[Finding] = []
    for rank in sorted(by_rank):
        fresh: list[Finding] = []
        last_end = 0
        for finding in sorted(by_rank[rank]):  # one rule's findings, by start
            _, start, end = finding
            if start < end and start >= last_end and not _overlaps(taken, start, end):
                fresh.append(finding)
                last_end = end
        kept += fresh
        taken = sorted(taken + [(start, end) for _, start, end in fresh])  # two sorted runs: linear
    return sorted(kept, key=operator.itemgetter(1))


def redact(text: str, *, salt: str) -> Redacted:
    pieces: list[str] = []
    kinds: set[str] = set()
    done = 0
    for rank, start, end in _kept(text, itertools.chain(_anchored(text), _shaped(text))):
        kind = RULES[rank].kind
        kinds.add(kind)
        pieces += (text[done:start], placeholder(kind, text[start:end], salt))
        done = end
    pieces.append(text[done:])
    return Redacted("".join(pieces), tuple(sorted(kinds)))


if __name__ == "__main__":  # pragma: no cover - exercised by a subprocess test
    sys.stdout.write(redact(sys.stdin.read(), salt=new_salt()).text)
