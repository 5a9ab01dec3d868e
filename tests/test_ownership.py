"""Every URL of the web app answers 404 to a signed-in stranger: carol gets nothing of workspace A.

The URLconf is walked, so a new view without a case in tests/ownership_cases.py fails the suite.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from django.apps import apps
from django.http import HttpResponse
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, path, reverse

from accounts.models import Workspace
from accounts.services import invitation_create
from tests import ownership_cases
from tests.ownership_cases import (
    CASES,
    PUBLIC,
    THIRD_PARTY_NAMESPACES,
    THIRD_PARTY_PREFIXES,
    Case,
    Objects,
)
from weft.models import Event


@dataclass(frozen=True)
class Route:
    name: str | None
    route: str


def walk(
    patterns: Sequence[URLPattern | URLResolver], prefix: str = "", namespace: str = ""
) -> Iterator[Route]:
    """Every URL pattern under `patterns`, with its full name (namespaces joined by ':')."""
    for entry in patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            if route.startswith(THIRD_PARTY_PREFIXES) or entry.namespace in THIRD_PARTY_NAMESPACES:
                continue
            inner = f"{namespace}:{entry.namespace}" if namespace and entry.namespace else entry.namespace
            yield from walk(entry.url_patterns, route, inner or namespace)
        elif not route.startswith(THIRD_PARTY_PREFIXES):
            if entry.name is None:
                yield Route(None, route)
            else:
                yield Route(f"{namespace}:{entry.name}" if namespace else entry.name, route)


def missing_cases(resolver: URLResolver) -> list[str]:
    """One line per URL that has neither an ownership case nor a PUBLIC entry."""
    problems = []
    for r in walk(resolver.url_patterns):
        if r.name is None:
            problems.append(f"{r.route!r} has no name: name it and add it to CASES or PUBLIC")
        elif r.name not in CASES and r.name not in PUBLIC:
            problems.append(f"{r.name!r} ({r.route})")
    return problems


def assert_every_url_has_a_case(resolver: URLResolver) -> None:
    problems = missing_cases(resolver)
    assert not problems, (
        "These URLs have no ownership test. Add a case for each to CASES in tests/ownership_cases.py "
        "(the format is at the top of that file), or list it in PUBLIC with the reason:\n  "
        + "\n  ".join(problems)
    )


def url_names() -> set[str]:
    return {r.name for r in walk(get_resolver().url_patterns) if r.name}


def test_it_has_a_case_for_every_url():
    assert_every_url_has_a_case(get_resolver())


def test_it_has_no_case_for_a_url_that_is_gone():
    assert sorted(set(CASES) - url_names()) == []


def test_it_fails_for_a_url_without_a_case():
    def view(request, slug):  # pragma: no cover - never called
        return HttpResponse()

    resolver = URLResolver(
        get_resolver().pattern,
        [*get_resolver().url_patterns, path("w/<slug:slug>/new/", view, name="new_page")],
    )
    with pytest.raises(AssertionError, match=r"Add a case .* tests/ownership_cases.py(.|\n)*'new_page'"):
        assert_every_url_has_a_case(resolver)


def test_it_skips_only_third_party_prefixes():
    routes = [r.route for r in walk(get_resolver().url_patterns)]
    assert not any(r.startswith(THIRD_PARTY_PREFIXES) for r in routes)
    assert "w/<slug:slug>/members/" in routes


@pytest.fixture
def objects(alice, bob, ws_a, carol, ws_b) -> Objects:
    invitation = invitation_create(workspace=ws_a, invited_by=alice, email="dan@example.com")
    return Objects(ws=ws_a, alice=alice, bob=bob, invitation=invitation)


def _case(name: str) -> Case:
    case = CASES[name]
    return case if isinstance(case, Case) else Case(case)


@pytest.mark.parametrize("name", sorted(CASES))
def test_it_answers_404_to_carol(name: str, objects: Objects, carol, client: Client):
    if name not in url_names():
        pytest.fail(f"{name} is in CASES but not in the URLconf")
    url = reverse(name, kwargs=_case(name).kwargs(objects))
    client.force_login(carol)
    assert client.get(url).status_code == 404, f"GET {url} as carol"
    assert client.post(url).status_code == 404, f"POST {url} as carol"


@pytest.mark.parametrize("name", sorted(n for n in CASES if _case(n).alice_get is not None))
def test_it_serves_alice(name: str, objects: Objects, alice, client: Client):
    url = reverse(name, kwargs=_case(name).kwargs(objects))
    client.force_login(alice)
    assert client.get(url).status_code == _case(name).alice_get, f"GET {url} as alice"


def test_the_documented_way_to_add_a_url_builds_that_url(objects: Objects):
    doc = ownership_cases.__doc__ or ""
    examples = [line.strip() for line in doc.splitlines() if line.strip().startswith("CASES[")]
    added: dict[str, Any] = {}
    for example in examples:
        exec(example, {"CASES": added, "Case": Case})
    assert len(added) == 2, examples
    for name, case in added.items():
        kwargs = (case if isinstance(case, Case) else Case(case)).kwargs(objects)
        assert reverse(name, kwargs=kwargs).startswith(f"/w/{objects.ws.slug}/"), name


MISSING_ID = 987654321


def _object_id_routes() -> dict[str, str]:
    """URL name → route, for every walked URL that names an object by id."""
    return {r.name: r.route for r in walk(get_resolver().url_patterns) if r.name and "<int:" in r.route}


def _workspace_rows(ws: Workspace) -> dict[str, list[dict[str, Any]]]:
    """Every row of every model that belongs to `ws`, and the workspace row itself."""
    rows: dict[str, list[dict[str, Any]]] = {
        "accounts.Workspace": [dict(row) for row in Workspace.objects.filter(pk=ws.pk).values()]
    }
    for model in apps.get_models():
        fields = {f.name: f for f in model._meta.get_fields()}
        owner = fields.get("workspace")
        if owner is not None and getattr(owner, "related_model", None) is Workspace:
            owned = model._default_manager.filter(workspace=ws).order_by("pk")
            rows[model._meta.label] = list(owned.values())
    return rows


def test_it_walks_every_url_with_an_object_id():
    assert {
        "member_role",
        "member_remove",
        "invitation_revoke",
        "connection_revoke",
        "token_revoke",
        "boards:task",
        "boards:task_edit",
        "boards:task_move",
        "boards:task_trash",
        "boards:task_restore",
        "boards:inbox_decide",
        "boards:question_answer",
        "issues:issue",
        "issues:reply",
        "issues:status",
        "issues:duplicate",
        "issues:upstream",
        "issues:task",
    } <= set(_object_id_routes())


@pytest.mark.parametrize("name", sorted(_object_id_routes()))
def test_it_answers_a_foreign_id_in_carols_own_workspace_like_a_missing_one(
    name: str, objects: Objects, carol, ws_b: Workspace, client: Client
):
    case = _case(name)
    own = {**case.kwargs(objects)}
    if "slug" in own:
        own["slug"] = ws_b.slug
    (id_name,) = [k for k in own if k != "slug"]
    missing = {**own, id_name: MISSING_ID}
    foreign_url, missing_url = reverse(name, kwargs=own), reverse(name, kwargs=missing)
    client.force_login(carol)
    before = _workspace_rows(objects.ws)
    events = Event.objects.filter(workspace=objects.ws).count()
    methods = [("GET", {}), ("POST", case.post)]
    for method, data in methods:
        send = client.get if method == "GET" else client.post
        expected = send(missing_url, data)
        got = send(foreign_url, data)
        assert (got.status_code, got.content) == (expected.status_code, expected.content), (
            f"{method} {foreign_url} as carol answers unlike the missing {missing_url}"
        )
        # The method the view takes must reach the lookup; the other is refused alike either way.
        if (method == "GET") == (case.alice_get is not None):
            assert got.status_code == 404, f"{method} {foreign_url} as carol"
    assert Event.objects.filter(workspace=objects.ws).count() == events
    assert _workspace_rows(objects.ws) == before, f"carol changed workspace A through {foreign_url}"


# URLs whose form names a second object by id: (URL name, form field, workspace A's object, other fields).
FORM_IDS = [
    ("issues:task", "board", "board", {"title": "Taken over"}),
    ("issues:duplicate", "of", "issue", {}),
    ("issues:close", "issue", "issue", {}),
]


@pytest.mark.parametrize(("name", "field", "target", "data"), FORM_IDS)
def test_it_answers_a_foreign_id_in_a_form_like_a_missing_one(
    name: str, field: str, target: str, data: dict[str, Any], objects: Objects, carol, ws_b, client: Client
):
    from accounts.models import AgentConnection
    from tests.issues.helpers import submit

    own = submit(AgentConnection.objects.create(workspace=ws_b, user=carol, name="Carol's agent")).issue
    kwargs: dict[str, Any] = {"slug": ws_b.slug}
    if name != "issues:close":
        kwargs["issue_id"] = own.pk
    url = reverse(name, kwargs=kwargs)
    foreign = getattr(objects, target).pk
    client.force_login(carol)
    before = _workspace_rows(objects.ws)
    own_before = _workspace_rows(ws_b)
    events = Event.objects.count()
    missing = client.post(url, {**data, field: MISSING_ID})
    got = client.post(url, {**data, field: foreign})
    assert (got.status_code, got.content) == (missing.status_code, missing.content) and got.status_code == 404
    assert Event.objects.count() == events
    assert _workspace_rows(objects.ws) == before and _workspace_rows(ws_b) == own_before
