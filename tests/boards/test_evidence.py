"""The completion evidence as values: which artifacts are checkable, what is kept unverified, and
what the task's checks say. Pure: no database."""

from __future__ import annotations

import json
from typing import Any

import pytest

from boards import evidence, limits
from boards.limits import LimitError

SHA = "ab" * 32
URL = {"kind": "url", "uri": "https://example.com/x"}


@pytest.mark.parametrize(
    ("artifact", "problem"),
    [
        pytest.param(URL, None, id="a url"),
        pytest.param(
            {"kind": "pr", "uri": "http://h/1", "httpStatus": 200, "sha256": SHA}, None, id="all fields"
        ),
        pytest.param({"kind": "commit", "uri": "abc123"}, None, id="a commit is not a URL"),
        pytest.param({"kind": "file", "uri": "x" * limits.URI}, None, id="a uri at its limit"),
        pytest.param({"kind": "url", "uri": "https://h", "httpStatus": 100}, None, id="status 100"),
        pytest.param({"kind": "url", "uri": "https://h", "httpStatus": 599}, None, id="status 599"),
        pytest.param({"kind": "url", "uri": "https://h", "sha256": SHA.upper()}, None, id="uppercase hex"),
        pytest.param(
            "https://h", "an artifact is an object {kind, uri, httpStatus?, sha256?}", id="a string"
        ),
        pytest.param(
            {"kind": "link", "uri": "x"}, "unknown kind 'link'; one of url, commit, file, pr", id="kind"
        ),
        pytest.param({"kind": "file", "uri": " "}, "uri must be a non-empty string", id="blank uri"),
        pytest.param({"kind": "file", "uri": 7}, "uri must be a non-empty string", id="uri not a string"),
        pytest.param(
            {"kind": "file", "uri": "x" * (limits.URI + 1)},
            "uri is longer than 2000 characters",
            id="long uri",
        ),
        pytest.param(
            {"kind": "url", "uri": "ftp://h/x"}, "uri must be an http(s) URL with a host", id="scheme"
        ),
        pytest.param(
            {"kind": "pr", "uri": "https:///x"}, "uri must be an http(s) URL with a host", id="no host"
        ),
        pytest.param(
            {"kind": "url", "uri": "http://[::1"}, "uri must be an http(s) URL with a host", id="bad URL"
        ),
        pytest.param(
            {"kind": "url", "uri": "https://h", "httpStatus": 99},
            "httpStatus must be an HTTP status code from 100 to 599",
            id="status 99",
        ),
        pytest.param(
            {"kind": "url", "uri": "https://h", "httpStatus": 600},
            "httpStatus must be an HTTP status code from 100 to 599",
            id="status 600",
        ),
        pytest.param(
            {"kind": "url", "uri": "https://h", "httpStatus": True},
            "httpStatus must be an HTTP status code from 100 to 599",
            id="status a bool",
        ),
        pytest.param(
            {"kind": "url", "uri": "https://h", "httpStatus": "200"},
            "httpStatus must be an HTTP status code from 100 to 599",
            id="status a string",
        ),
        pytest.param(
            {"kind": "url", "uri": "https://h", "sha256": SHA[:-1]},
            "sha256 must be 64 hexadecimal characters",
            id="short digest",
        ),
        pytest.param(
            {"kind": "url", "uri": "https://h", "sha256": "g" * 64},
            "sha256 must be 64 hexadecimal characters",
            id="not hex",
        ),
        pytest.param(
            {"kind": "url", "uri": "https://h", "sha256": 1},
            "sha256 must be 64 hexadecimal characters",
            id="digest int",
        ),
        pytest.param(
            {"kind": "url", "uri": "https://h", "z": 1, "a": 2}, "unknown fields a, z", id="extra fields"
        ),
    ],
)
def test_it_says_why_an_artifact_cannot_be_checked(artifact: Any, problem: str | None) -> None:
    assert evidence._artifact_problem(artifact) == problem


def test_it_takes_none_one_value_or_a_list_of_evidence() -> None:
    assert evidence._as_list(None) == []
    assert evidence._as_list("one") == ["one"]
    assert evidence._as_list(("a", "b")) == ["a", "b"]
    assert evidence._as_list(["a"]) == ["a"]


def test_it_keeps_an_unusable_piece_as_given_and_cuts_it_past_its_size() -> None:
    assert evidence._kept({"k": 1}, "why", 100) == {"given": {"k": 1}, "unverifiable": "why"}
    exact = "x" * 8  # json.dumps adds the two quotes: 10 characters
    assert evidence._kept(exact, "why", 10) == {"given": exact, "unverifiable": "why"}
    assert evidence._kept(exact, "why", 9) == {"given": '"xxxxxxxx', "truncated": True, "unverifiable": "why"}


def test_it_sorts_the_evidence_into_what_is_stored_and_what_was_not_accepted() -> None:
    lists, not_accepted = evidence.sorted_evidence(
        artifacts=[URL, {"kind": "link"}], claims="it works", not_done=[3], unknowns=None
    )
    assert lists == {
        "artifacts": [
            URL,
            {"given": {"kind": "link"}, "unverifiable": "unknown kind 'link'; one of url, commit, file, pr"},
        ],
        "claims": ["it works"],
        "not_done": [{"given": 3, "unverifiable": "a statement is a string"}],
        "unknowns": [],
    }
    assert not_accepted == [
        {"field": "artifacts[1]", "reason": "unknown kind 'link'; one of url, commit, file, pr"},
        {"field": "notDone[0]", "reason": "a statement is a string"},
    ]


def test_an_artifact_larger_than_its_json_limit_is_kept_unverified() -> None:
    # Within every field's own limit, only escaped (non-ASCII) characters reach the JSON limit.
    big = {"kind": "file", "uri": "", "sha256": SHA}
    escapes, rest = divmod(limits.ARTIFACT_JSON - len(json.dumps(big)), 6)
    fits = {**big, "uri": "é" * escapes + "f" * rest}
    assert len(json.dumps(fits)) == limits.ARTIFACT_JSON and evidence._artifact_problem(fits) is None
    lists, not_accepted = evidence.sorted_evidence(
        artifacts=[fits], claims=None, not_done=None, unknowns=None
    )
    assert lists["artifacts"] == [fits] and not_accepted == []
    over = {**fits, "uri": fits["uri"] + "f"}
    lists, not_accepted = evidence.sorted_evidence(artifacts=over, claims=None, not_done=None, unknowns=None)
    reason = f"larger than {limits.ARTIFACT_JSON} characters of JSON"
    assert not_accepted == [{"field": "artifacts[0]", "reason": reason}]
    assert lists["artifacts"][0]["truncated"] is True and lists["artifacts"][0]["unverifiable"] == reason


@pytest.mark.parametrize(
    ("field", "kwargs", "limit"),
    [
        ("artifacts", {"artifacts": [URL] * (limits.ARTIFACTS + 1)}, limits.ARTIFACTS),
        ("claims", {"claims": ["c"] * (limits.EVIDENCE_ITEMS + 1)}, limits.EVIDENCE_ITEMS),
        ("notDone", {"not_done": ["c"] * (limits.EVIDENCE_ITEMS + 1)}, limits.EVIDENCE_ITEMS),
        ("unknowns", {"unknowns": ["c"] * (limits.EVIDENCE_ITEMS + 1)}, limits.EVIDENCE_ITEMS),
        ("claims[1]", {"claims": ["c", "c" * (limits.EVIDENCE_ITEM + 1)]}, limits.EVIDENCE_ITEM),
    ],
)
def test_counts_and_text_past_their_limits_refuse_the_evidence(field: str, kwargs: Any, limit: int) -> None:
    given = {"artifacts": None, "claims": None, "not_done": None, "unknowns": None, **kwargs}
    with pytest.raises(LimitError) as refused:
        evidence.sorted_evidence(**given)
    assert refused.value.field == field and refused.value.limit == limit


def test_counts_at_their_limits_are_accepted() -> None:
    lists, _ = evidence.sorted_evidence(
        artifacts=[URL] * limits.ARTIFACTS,
        claims=["c" * limits.EVIDENCE_ITEM] * limits.EVIDENCE_ITEMS,
        not_done=None,
        unknowns=None,
    )
    assert len(lists["artifacts"]) == limits.ARTIFACTS and len(lists["claims"]) == limits.EVIDENCE_ITEMS


def test_it_runs_the_tasks_checks_against_the_artifacts() -> None:
    checks = [
        {"kind": "artifact_kind", "value": "url"},
        {"kind": "artifact_kind", "value": "pr"},
        {"kind": "artifact_present"},
        {"kind": "lint"},
        "not a check",
    ]
    results, passed = evidence.verify(checks, [URL, "ignored"])
    assert results == [
        {"check": checks[0], "passed": True, "detail": "an artifact of kind url"},
        {"check": checks[1], "passed": False, "detail": "an artifact of kind pr"},
        {"check": checks[2], "passed": True, "detail": "at least one artifact"},
        {"check": checks[3], "passed": None, "detail": "unknown check kind, not run"},
        {"check": checks[4], "passed": None, "detail": "unknown check kind, not run"},
    ]
    assert passed is False


def test_all_checks_passing_or_none_run_decide_the_verdict() -> None:
    assert evidence.verify([{"kind": "artifact_present"}], [URL])[1] is True
    assert evidence.verify([{"kind": "artifact_present"}], [])[1] is False
    assert evidence.verify([{"kind": "lint"}], [URL]) == (
        [{"check": {"kind": "lint"}, "passed": None, "detail": "unknown check kind, not run"}],
        None,
    )
    assert evidence.verify({"kind": "artifact_present"}, [URL]) == ([], None)  # type: ignore[arg-type]
