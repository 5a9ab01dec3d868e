"""Named people: alice (owner) and bob (member) in workspace A; carol alone in workspace B."""

from __future__ import annotations

import os
import time

import pytest
from allauth.account.models import EmailAddress
from django.db import connection
from django.utils import timezone

from accounts.models import AgentConnection, Seat, User, Workspace
from accounts.services import workspace_create
from boards import clock

PASSWORD = "correct horse battery staple"


def _person(email: str) -> User:
    user = User.objects.create_user(email=email, password=PASSWORD)
    EmailAddress.objects.create(user=user, email=email, verified=True, primary=True)
    return user


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """pytest-django's test database, and at its end no session left on it: the loop pools of
    event loops that have ended (weft.apool) keep theirs, and PostgreSQL drops no database in use."""
    yield
    if connection.vendor != "postgresql":
        return
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        others = "FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        cursor.execute(f"SELECT pg_terminate_backend(pid) {others}")
        for _ in range(50):  # the sessions end a moment after the signal
            cursor.execute(f"SELECT count(*) {others}")
            if cursor.fetchone()[0] == 0:
                break
            time.sleep(0.1)


@pytest.fixture
def alice(db) -> User:
    return _person("alice@example.com")


@pytest.fixture
def bob(db, ws_a: Workspace) -> User:
    user = _person("bob@example.com")
    Seat.objects.create(workspace=ws_a, user=user, role=Seat.MEMBER)
    return user


@pytest.fixture
def carol(db) -> User:
    return _person("carol@example.com")


@pytest.fixture
def ws_a(alice: User) -> Workspace:
    return workspace_create(owner=alice, name="Acme")


@pytest.fixture
def ws_b(carol: User) -> Workspace:
    return workspace_create(owner=carol, name="Beta")


@pytest.fixture
def on_postgres() -> None:
    """Skip unless the suite runs on PostgreSQL (make test runs it there too)."""
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: run through `python -m tests.servers --postgres -- pytest`")


@pytest.fixture
def redis_url() -> str:
    url = os.environ.get("WEFT_TEST_REDIS_URL")
    if not url:
        pytest.skip("needs Redis: run through `python -m tests.servers --redis -- pytest`")
    return url


@pytest.fixture
def moved_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(clock, "db_now", timezone.now)


@pytest.fixture
def agent(ws_a: Workspace, alice: User) -> AgentConnection:
    return AgentConnection.objects.select_related("workspace").get(
        pk=AgentConnection.objects.create(workspace=ws_a, user=alice, name="Claude Code").pk
    )


@pytest.fixture
def agent2(ws_a: Workspace, alice: User) -> AgentConnection:
    return AgentConnection.objects.select_related("workspace").get(
        pk=AgentConnection.objects.create(workspace=ws_a, user=alice, name="Cursor").pk
    )


@pytest.fixture
def agent_b(ws_b: Workspace, carol: User) -> AgentConnection:
    return AgentConnection.objects.select_related("workspace").get(
        pk=AgentConnection.objects.create(workspace=ws_b, user=carol, name="Codex").pk
    )
