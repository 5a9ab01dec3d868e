"""The rules' constants as the one-statement claim and completion spell them (fast.sql_literal)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from boards import lease
from boards.models import Column
from boards.services import fast


@pytest.mark.parametrize(
    ("value", "spelled"),
    [
        (5, "5"),
        (True, "true"),
        (timedelta(minutes=20), "interval '1200.0 seconds'"),
        (Column.DOING, "'doing'"),
        ((Column.BACKLOG, Column.TODO), "('backlog', 'todo')"),
    ],
)
def test_a_constant_is_spelled_as_sql(value, spelled):
    assert fast.sql_literal(value) == spelled


@pytest.mark.parametrize("value", ["it's", "todo; DROP TABLE boards_task", "", 1.5, None, ["todo"]])
def test_anything_but_a_plain_constant_is_refused(value):
    with pytest.raises(ValueError, match="not a constant"):
        fast.sql_literal(value)


def test_the_statements_spell_the_lease_and_the_states_they_check():
    assert f"clock.now + {fast.sql_literal(lease.LEASE_DURATION)}" in fast.CLAIM_SQL
    assert "IN ('backlog', 'todo')" in fast.CLAIM_SQL
    assert "%(lease)s" not in fast.CLAIM_SQL
