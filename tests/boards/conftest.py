"""Fixtures for the claim loop: connections (agents), tasks, and a clock tests can move.

PostgreSQL's clock does not move with time-machine, so `moved_clock` patches
`boards.clock.db_now` to read the (travelled) process clock on every database.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from accounts.models import User, Workspace
from boards.models import Task
from boards.services import task_create


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
