"""Fixtures for the people's pages."""

from __future__ import annotations

import pytest
from django.utils import timezone

from accounts.models import AgentConnection, User, Workspace
from boards import clock


@pytest.fixture
def moving_clock(monkeypatch):
    """The database clock follows time-machine (PostgreSQL's own clock would not move)."""
    monkeypatch.setattr(clock, "db_now", timezone.now)


@pytest.fixture
def agent(alice: User, ws_a: Workspace) -> AgentConnection:
    return AgentConnection.objects.create(workspace=ws_a, user=alice, name="Claude Code")
