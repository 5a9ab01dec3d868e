"""The completion report's evidence, checked as values: pure (no ORM, no clock reads).

Artifacts are objects {kind, uri, httpStatus?, sha256?}; claims, not-done items and unknowns are
statements (strings). Counts and text past their limits raise LimitError; a piece of the wrong
shape is kept as given and marked unverifiable, because losing finished work is worse than
recording it unverified. `verify` runs a task's verification checks against the usable artifacts.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from boards import limits

ARTIFACT_KINDS = ("url", "commit", "file", "pr")
ARTIFACT_FIELDS = frozenset({"kind", "uri", "httpStatus", "sha256"})


def _as_list(value: Any) -> list[Any]:
    """Evidence as given: None → [], a single value → [value], a list kept as is."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def _artifact_problem(value: Any) -> str | None:
    """Why a piece of evidence cannot be checked as an artifact, or None when it can."""
    if not isinstance(value, dict):
        return "an artifact is an object {kind, uri, httpStatus?, sha256?}"
    kind, uri = value.get("kind"), value.get("uri")
    if kind not in ARTIFACT_KINDS:
        return f"unknown kind {kind!r}; one of {', '.join(ARTIFACT_KINDS)}"
    if not isinstance(uri, str) or not uri.strip():
        return "uri must be a non-empty string"
    if len(uri) > limits.URI:
        return f"uri is longer than {limits.URI} characters"
    if kind in ("url", "pr"):
        try:
            parts = urlsplit(uri)
        except ValueError:
            parts = None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
            return "uri must be an http(s) URL with a host"
    status = value.get("httpStatus")
    if status is not None and (
        isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599
    ):
        return "httpStatus must be an HTTP status code from 100 to 599"
    digest = value.get("sha256")
    if digest is not None and not (
        isinstance(digest, str) and len(digest) == 64 and all(c in "0123456789abcdefABCDEF" for c in digest)
    ):
        return "sha256 must be 64 hexadecimal characters"
    extra = sorted(set(value) - ARTIFACT_FIELDS)
    if extra:
        return f"unknown fields {', '.join(map(str, extra))}"
    return None


def _kept(value: Any, reason: str, size: int) -> dict[str, Any]:
    """An unusable piece of evidence kept as given (cut to `size` characters of JSON if larger).
    A number JSON cannot hold (NaN, an infinity: a JSON parser reads 1e400 as one) is kept as the
    text it prints as, since the report's lists are stored as JSON."""
    try:
        text = json.dumps(value, default=str, allow_nan=False)
    except ValueError:
        value = text = json.dumps(value, default=str)
    if len(text) > size:
        return {"given": text[:size], "truncated": True, "unverifiable": reason}
    return {"given": value, "unverifiable": reason}


def sorted_evidence(
    *, artifacts: Any, claims: Any, not_done: Any, unknowns: Any
) -> tuple[dict[str, list[Any]], list[dict[str, str]]]:
    """The evidence to store and what of it was not accepted (kept, marked, sent to a person).

    Limits on counts and on text raise LimitError (nothing stored); a piece that is the wrong
    shape is kept as given, marked unverifiable with the reason: losing finished work is worse
    than recording it unverified.
    """
    not_accepted: list[dict[str, str]] = []
    lists: dict[str, list[Any]] = {"artifacts": []}
    for index, artifact in enumerate(limits.at_most("artifacts", _as_list(artifacts), limits.ARTIFACTS)):
        problem = _artifact_problem(artifact)
        if problem is None and len(json.dumps(artifact)) > limits.ARTIFACT_JSON:
            problem = f"larger than {limits.ARTIFACT_JSON} characters of JSON"
        if problem is None:
            lists["artifacts"].append(artifact)
        else:
            lists["artifacts"].append(_kept(artifact, problem, limits.ARTIFACT_JSON))
            not_accepted.append({"field": f"artifacts[{index}]", "reason": problem})
    for name, field, value in (
        ("claims", "claims", claims),
        ("not_done", "notDone", not_done),
        ("unknowns", "unknowns", unknowns),
    ):
        lists[name] = []
        for index, item in enumerate(limits.at_most(field, _as_list(value), limits.EVIDENCE_ITEMS)):
            if isinstance(item, str):
                lists[name].append(limits.text(f"{field}[{index}]", item, limits.EVIDENCE_ITEM))
            else:
                reason = "a statement is a string"
                lists[name].append(_kept(item, reason, limits.EVIDENCE_ITEM))
                not_accepted.append({"field": f"{field}[{index}]", "reason": reason})
    return lists, not_accepted


def verify(checks: list[Any], artifacts: list[Any]) -> tuple[list[dict[str, Any]], bool | None]:
    """Run the task's verification checks against the artifacts; (results, all passed or None)."""
    kinds = {a.get("kind") for a in artifacts if isinstance(a, dict)}
    results: list[dict[str, Any]] = []
    for check in checks if isinstance(checks, list) else []:
        kind = check.get("kind") if isinstance(check, dict) else None
        if kind == "artifact_kind":
            wanted = check.get("value")
            ok = wanted in kinds
            results.append({"check": check, "passed": ok, "detail": f"an artifact of kind {wanted}"})
        elif kind == "artifact_present":
            results.append({"check": check, "passed": bool(artifacts), "detail": "at least one artifact"})
        else:
            results.append({"check": check, "passed": None, "detail": "unknown check kind, not run"})
    ran = [r["passed"] for r in results if r["passed"] is not None]
    return results, (all(ran) if ran else None)
