"""The loop pool numbers a statement's placeholders once (weft.apool.positional).

psycopg reads a statement's `%(name)s` placeholders again on every call when the statement is
over 4 KB (it remembers only shorter ones), and startNext's claim is over: a tenth of the
server's busy samples in the 16-agent bench went to that reading. The pool sends `$n` text on a
raw cursor instead; these tests hold the numbering to what psycopg itself makes of the statements.
"""

from __future__ import annotations

import pytest
from psycopg._queries import PostgresQuery
from psycopg.adapt import Transformer

from boards.services import fast, fast_next
from weft import apool
from weft.mcp import gate

STATEMENTS = {
    "claim": fast.CLAIM_SQL,
    "completion": fast.COMPLETE_SQL,
    "startNext": fast_next.NEXT_CLAIM_SQL,
    "gate": gate.STATEMENT,
}


@pytest.mark.parametrize("name", sorted(STATEMENTS))
def test_the_numbering_is_psycopgs(name):
    """The same text and the same order of names as psycopg's own reading of the statement."""
    sql = STATEMENTS[name]
    statement = apool.positional(sql)
    names = dict.fromkeys(statement.names, None)
    query = PostgresQuery(Transformer())
    query.convert(sql, names)
    assert statement.text == query.query
    assert list(statement.names) == query._order


def test_a_name_used_twice_is_one_parameter():
    statement = apool.positional("SELECT %(a)s, %(b)s, %(a)s")
    assert statement.text == b"SELECT $1, $2, $1"
    assert statement.names == ("a", "b")


@pytest.mark.parametrize("sql", ["SELECT %s", "SELECT 'a%%b'", "SELECT %(a)d"])
def test_other_placeholders_are_refused(sql):
    with pytest.raises(ValueError, match="placeholders only"):
        apool.positional(sql)
