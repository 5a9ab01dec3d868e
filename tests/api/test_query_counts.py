"""What a REST call costs the database, pinned: a cached token costs the same two queries around
the tool as an MCP call (the connection re-check and the usage increment); a write with an
Idempotency-Key adds its reservation (an expiry DELETE and the INSERT) and its stored answer."""

from __future__ import annotations

import pytest
from django.db import connection

pytestmark = pytest.mark.django_db

OVERHEAD = 2  # connection_live + usage_consume's UPDATE
REPLAY = 2
# The expired-or-abandoned DELETE and the key's SELECT; the INSERT in its savepoint (3), the
# write's own savepoint inside the key's transaction (2), the answer UPDATE.
KEY = 8


@pytest.fixture
def warm(api):
    """The token verified and this month's usage row made."""
    api.get("work")
    return api


def test_a_board_read_costs_the_overhead_and_its_selector(warm, django_assert_num_queries):
    # The board and its tasks in one query; PostgreSQL reads the database clock too.
    with django_assert_num_queries(OVERHEAD + 1 + (connection.vendor == "postgresql")):
        assert warm.get("board").status == 200


def test_a_keyed_write_costs_the_key_on_top_of_the_write(
    warm, django_assert_num_queries, django_assert_max_num_queries
):
    task = warm.post("tasks", {"title": "Counted"}).body["task"]["id"]
    with django_assert_max_num_queries(30) as plain:
        warm.call("PATCH", f"tasks/{task}", {"priority": 2})
    with django_assert_num_queries(len(plain.captured_queries) + KEY):
        warm.call("PATCH", f"tasks/{task}", {"priority": 3}, headers={"Idempotency-Key": "counted"})
    # A replay: the expiry DELETE and the first answer's SELECT; no gate, no meter, no write.
    with django_assert_num_queries(REPLAY):
        warm.call("PATCH", f"tasks/{task}", {"priority": 3}, headers={"Idempotency-Key": "counted"})
