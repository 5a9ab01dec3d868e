"""Fixtures for the claim loop: connections (agents), tasks, and a clock tests can move.

PostgreSQL's clock does not move with time-machine, so `moved_clock` patches
`boards.clock.db_now` to read the (travelled) process clock on every database.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.utils import timezone

from accounts.models import AgentConnection, User, Workspace
from boards import clock
from boards.models import Task
from boards.services import task_create


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


@pytest.fixture
def pro(ws_a: Workspace) -> Workspace:
    """Workspace A without monthly caps (for tests that create many tasks)."""
    from accounts.models import Plan

    ws_a.plan = Plan.named(Plan.PRO)
    ws_a.save(update_fields=["plan"])
    return ws_a


@pytest.fixture
def task(ws_a: Workspace, alice: User) -> Task:
    return task_create(
        workspace=ws_a, title="Fix the login redirect", description="It loops.", by_user=alice
    ).task


@pytest.fixture
def make_task(ws_a: Workspace, alice: User) -> Iterator[object]:
    def make(title: str = "A task", **kwargs: object) -> Task:
        return task_create(workspace=kwargs.pop("workspace", ws_a), title=title, by_user=alice, **kwargs).task  # type: ignore[arg-type]

    yield make
