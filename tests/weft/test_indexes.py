"""The tables every claim and completion writes keep no index another of their indexes leads
with (PostgreSQL).

Every index is one more entry each insert and each non-HOT update writes: a claim and a
completion update a task and a run, insert a report, events and an Inbox item and count the
call, so an index the planner never needs is write cost on the hottest path. Django gives
every foreign key an index of its own; where a composite index leads with the same column, that
one serves every lookup the foreign key's would, and the foreign key is declared
`db_index=False`.
"""

from __future__ import annotations

import pytest
from django.db import connection

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("on_postgres")]

INDEXES = """
SELECT t.relname, i.relname, x.indisunique, x.indpred IS NOT NULL,
       ARRAY(SELECT a.attname FROM unnest(x.indkey) WITH ORDINALITY k(attnum, n)
             JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum ORDER BY k.n)
FROM pg_index x
JOIN pg_class i ON i.oid = x.indexrelid
JOIN pg_class t ON t.oid = x.indrelid
JOIN pg_namespace s ON s.oid = t.relnamespace
WHERE s.nspname = 'public' AND x.indexprs IS NULL
"""
# The tables the claim and the completion write (boards/services/fast.py) and the meter.
WRITTEN = {"boards_task", "boards_run", "boards_report", "boards_inboxitem", "weft_event", "accounts_usage"}


def test_no_index_of_a_written_table_is_the_first_column_of_another():
    with connection.cursor() as cursor:
        cursor.execute(INDEXES)
        rows = cursor.fetchall()
    redundant = []
    for table, name, unique, partial, columns in rows:
        # A `_like` index is Django's pattern-ops twin of a text column's: it serves LIKE, not equality.
        if unique or partial or len(columns) != 1 or table not in WRITTEN or name.endswith("_like"):
            continue
        led = [
            other
            for t, other, _, other_partial, other_columns in rows
            if t == table and other != name and not other_partial and other_columns[0] == columns[0]
        ]
        if led:
            redundant.append(f"{table}.{name} ({columns[0]}): {', '.join(sorted(led))} lead with it")
    assert not redundant, "\n".join(redundant)


def test_the_optional_links_of_tasks_and_runs_are_indexed_only_where_set():
    """A task's assignee, assigner and creator links and a run's person and approval are NULL on
    most rows: each has an index over the rows that set it, and none over the rest (a claim and a
    completion rewrite both rows, and a full index takes a NULL entry each time)."""
    with connection.cursor() as cursor:
        cursor.execute(
            INDEXES + " AND t.relname IN ('boards_task', 'boards_run')"
            " AND (x.indpred IS NULL OR pg_get_expr(x.indpred, x.indrelid) LIKE '%IS NOT NULL%')"
        )
        rows = cursor.fetchall()
    optional = {
        ("boards_task", c)
        for c in (
            "assignee_connection_id",
            "assignee_user_id",
            "created_by_user_id",
            "created_by_connection_id",
            "assigned_user_id",
            "assigned_connection_id",
        )
    } | {("boards_run", "user_id"), ("boards_run", "approval_id")}
    own: dict[tuple[str, str], list[bool]] = {}
    for table, _name, _unique, partial, columns in rows:
        if len(columns) == 1:
            own.setdefault((table, columns[0]), []).append(partial)
    assert {link: own.get(link) for link in optional} == {link: [True] for link in optional}
