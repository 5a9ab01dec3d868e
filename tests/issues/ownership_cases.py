"""Ownership cases of the issue triage pages, merged into tests/ownership_cases.py's CASES."""

from __future__ import annotations

from typing import Any

from tests.ownership_cases import Case, Kwargs, Objects, extra


@extra("issue")
def _issue(o: Objects) -> object:
    from tests.issues.helpers import submit

    return submit(o.connection).issue


def _ws(o: Objects) -> dict[str, Any]:
    return {"slug": o.ws.slug}


def _issue_kwargs(o: Objects) -> dict[str, Any]:
    return {"slug": o.ws.slug, "issue_id": o.issue.pk}


def _post(kwargs: Kwargs, **data: Any) -> Case:
    return Case(kwargs, alice_get=None, post=data)


CASES: dict[str, Kwargs | Case] = {
    "issues:list": _ws,
    # The ids a form names besides the URL's (a closed issue, a duplicate's original, a board)
    # are walked in tests/issues/test_triage_pages.py: foreign answers like missing.
    "issues:close": _post(_ws),
    "issues:issue": _issue_kwargs,
    "issues:reply": _post(_issue_kwargs, body="Taken over", ask="on"),
    "issues:status": _post(_issue_kwargs, status="closed"),
    "issues:upstream": _post(_issue_kwargs, url="https://example.com/taken"),
    "issues:duplicate": _post(_issue_kwargs, of="1"),
    "issues:task": _post(_issue_kwargs, board="1", title="Taken over"),
}
