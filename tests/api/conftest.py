"""REST API fixtures: agents signed in with OAuth tokens, and a client that speaks JSON."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from django.test import Client

from accounts.models import AgentConnection, User, Workspace
from tests.mcp.harness import agent_token


@dataclass
class Answer:
    status: int
    body: Any
    headers: dict[str, str]


class Api:
    """The REST API as an agent calls it: a bearer token, JSON in and out."""

    def __init__(self, client: Client, token: str | None, connection: AgentConnection | None = None) -> None:
        self.client = client
        self.token = token
        self.connection = connection

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        headers: dict[str, str] | None = None,
        raw: bytes | None = None,
    ) -> Answer:
        extra: dict[str, Any] = {"HTTP_AUTHORIZATION": f"Bearer {self.token}"} if self.token else {}
        for name, value in (headers or {}).items():
            extra["HTTP_" + name.upper().replace("-", "_")] = value
        url = path if path.startswith("/") else f"/api/v1/{path}"
        if method == "GET":
            response = self.client.get(url, body or {}, **extra)
        else:
            data = raw if raw is not None else json.dumps(body if body is not None else {})
            response = self.client.generic(method, url, data, content_type="application/json", **extra)
        content = response.content
        return Answer(response.status_code, json.loads(content) if content else None, dict(response.headers))

    def get(self, path: str, query: dict[str, Any] | None = None) -> Answer:
        return self.call("GET", path, query)

    def post(self, path: str, body: Any = None, **kwargs: Any) -> Answer:
        return self.call("POST", path, body, **kwargs)


def signed_in(user: User, workspace: Workspace, **kwargs: Any) -> Api:
    token, connection = agent_token(user, workspace, **kwargs)
    return Api(Client(), token, connection)


@pytest.fixture(autouse=True)
def _forget_verified_tokens() -> None:
    from weft.mcp.verifier import verified_tokens

    verified_tokens.clear()


@pytest.fixture
def api(alice: User, ws_a: Workspace) -> Api:
    return signed_in(alice, ws_a)


@pytest.fixture
def api_b(carol: User, ws_b: Workspace) -> Api:
    return signed_in(carol, ws_b)


@pytest.fixture
def public_dns(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every host name resolves to one public address (no network is asked)."""
    from tests.hooks.conftest import fake_dns

    fake_dns(monkeypatch, {})


def person_token(user: User, workspace: Workspace, *, can_decide: bool = True) -> str:
    """A personal access token of `user` in `workspace`, as the tokens page makes it."""
    from accounts.models import Seat
    from accounts.tokens import pat_create

    seat = Seat.objects.get(user=user, workspace=workspace)
    return pat_create(seat=seat, name="Inbox", expires_in_days=None, can_decide=can_decide).secret


@pytest.fixture
def person(api: Api, alice: User, ws_a: Workspace) -> Api:
    """alice herself over REST: a personal access token made with "May decide my Inbox"."""
    return Api(api.client, person_token(alice, ws_a))
