"""The one clock the claim loop trusts: the database's.

Every service reads `db_now()` once per operation and uses that value for every expiry
comparison and timestamp it writes, so one operation sees one instant. On PostgreSQL it is
the server's `statement_timestamp()` (what Django's `Now()` compiles to there), so app servers
with skewed clocks still agree on expiry. SQLite is an embedded file with no server: its clock
is this host's clock, which is what `timezone.now()` reads.

Tests move time with time-machine; PostgreSQL's clock does not move with it, so tests that move
time patch `boards.clock.db_now` to `django.utils.timezone.now` (see tests/boards/conftest.py).
Callers must therefore look it up through the module (`clock.db_now()`), never import the name.
"""

from __future__ import annotations

from datetime import datetime

from django.db import connection
from django.utils import timezone


def db_now() -> datetime:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT statement_timestamp()")
            row = cursor.fetchone()
        assert row is not None
        value: datetime = row[0]
        return value
    return timezone.now()
