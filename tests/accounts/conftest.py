"""Fixtures for accounts: a database clock that follows time-machine.

PostgreSQL's clock does not move with time-machine, so `moving_clock` patches
`boards.clock.db_now` to read the (travelled) process clock on every database.
"""

from __future__ import annotations

import pytest
from django.utils import timezone

from boards import clock


@pytest.fixture
def moving_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(clock, "db_now", timezone.now)
