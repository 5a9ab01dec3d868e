"""Every page carries a Content-Security-Policy that allows only our scripts and this origin."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from tests.ownership_cases import CASES, Objects
from tests.test_ownership import _case
from tests.test_ownership import objects as objects  # the fixture

pytestmark = pytest.mark.django_db


def _policy(response) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    header = response.headers.get("Content-Security-Policy")
    assert header, f"{response.request['PATH_INFO']} ({response.status_code}) has no Content-Security-Policy"
    directives = [part.split() for part in header.split(";") if part.strip()]
    return {d[0]: d[1:] for d in directives}


def _strict(policy: dict[str, list[str]]) -> None:
    assert policy["default-src"] == ["'self'"]
    scripts = policy["script-src"]
    assert "'unsafe-inline'" not in scripts and "'unsafe-eval'" not in scripts
    assert policy["connect-src"] == ["'self'"]
    assert policy["frame-ancestors"] == ["'none'"]


PAGES = sorted(name for name in CASES if _case(name).alice_get)


@pytest.mark.parametrize("name", PAGES)
def test_it_sends_the_policy_with_every_workspace_page(name: str, objects: Objects, alice, client: Client):
    client.force_login(alice)
    response = client.get(reverse(name, kwargs=_case(name).kwargs(objects)))
    _strict(_policy(response))


@pytest.mark.parametrize(
    "path", ["/accounts/login/", "/accounts/signup/", "/admin/login/", "/no-such-page/", "/.well-known/x"]
)
def test_it_sends_the_policy_with_public_pages_and_errors(path: str, client: Client):
    _strict(_policy(client.get(path)))


def test_it_lets_the_inline_script_run_by_its_nonce(alice, ws_a, client: Client):
    client.force_login(alice)
    response = client.get(reverse("agent_connect"))
    assert response.status_code == 200
    nonce = next(s for s in _policy(response)["script-src"] if s.startswith("'nonce-"))[7:-1]
    inline = re.findall(r"<script(?![^>]*\bsrc=)([^>]*)>", response.content.decode())
    assert inline and all(f'nonce="{nonce}"' in attrs for attrs in inline), inline
