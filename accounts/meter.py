"""The monthly meter of agent calls as SQL, for the statements that count a call as they act.

`usage_consume` (accounts.services.workspaces) is the meter through the ORM. The MCP gate
(weft.mcp.gate) and startNext's one-statement claim (boards.services.fast_next) count a call inside
the statement that also does their work, so both take their meter from here: `METERED`, a CTE
that upserts this month's row under the cap, and `USED`, the count before the statement. Both
read a CTE named `live` with the columns `workspace`, `cap` (NULL: no cap) and `suspended` (a
suspended workspace meters nothing), and the parameters %(period)s and %(kind)s.

As `usage_consume`: the increment is conditional (`count + 1 <= cap`), so concurrent calls neither
lose a count nor overshoot the cap; under a cap of 0 the month's row is created at 0 and the call
refused. A call was counted when `metered` returned a positive count.
tests/mcp/test_gate.py runs each refusal through both meters and compares the answers.

complete_task with startNext as one statement counts its call and its claim with `READ`,
`second`, `BOTH` and `CHECKED` (below), last rather than first (tests/boards/test_complete_next.py).
"""

from __future__ import annotations

from accounts.models import Usage

_USAGE = Usage._meta.db_table

METERED = f"""metered AS (
    INSERT INTO {_USAGE} AS u (workspace_id, period, kind, count)
    SELECT live.workspace, %(period)s, %(kind)s, CASE WHEN live.cap < 1 THEN 0 ELSE 1 END FROM live
    WHERE NOT live.suspended
    ON CONFLICT (workspace_id, period, kind) DO UPDATE SET count = u.count + 1
    WHERE (SELECT cap FROM live) IS NULL OR u.count + 1 <= (SELECT cap FROM live)
    RETURNING u.count
)"""  # noqa: S608 (the table name is the model's; every value is a parameter)

ADMITTED = "EXISTS (SELECT 1 FROM metered WHERE count > 0)"

USED = (
    f"COALESCE((SELECT u.count FROM {_USAGE} u WHERE u.workspace_id = live.workspace "  # noqa: S608
    "AND u.period = %(period)s AND u.kind = %(kind)s), 0)"
)

# startNext's completion and claim as one statement (boards.services.fast_next) count the call and
# the claim it makes on one row, once, as the statement's last write: the row is read without a
# lock (`READ`), the call admitted on that count as `METERED` admits it (`READ_ADMITTED`,
# `READ_USED`), and the claim counted when the statement's completion went through and the cap has
# room for one more (`second`). The upsert (`BOTH`) adds one or two under the cap on the row as it
# is by then; if calls since the read leave no room for what was decided, it updates nothing and
# `CHECKED` fails the statement (a division by zero), so nothing it wrote stays: the caller then
# counts through `METERED`. The row is locked only from that update to the commit, not while the
# statement works. Without the month's row (its first call) the statement changes nothing either,
# and `METERED` creates it.
READ = f"""usage_row AS (
    SELECT u.id, u.count FROM {_USAGE} u, live WHERE u.workspace_id = live.workspace
      AND u.period = %(period)s AND u.kind = %(kind)s
)"""  # noqa: S608 (as METERED)
READ_ADMITTED = (
    "EXISTS (SELECT 1 FROM usage_row WHERE NOT live.suspended "
    "AND (live.cap IS NULL OR usage_row.count + 1 <= live.cap))"
)
READ_USED = "COALESCE((SELECT count FROM usage_row), 0)"
READ_FOUND = "EXISTS (SELECT 1 FROM usage_row)"


def second(condition: str) -> str:
    """The claim's count (`second`: one row for an admitted call, whether the claim is counted
    and the count before it), the claim counted when `condition` holds and the cap has room."""
    return f"""second AS (
    SELECT ({condition}) AND (live.cap IS NULL OR usage_row.count + 2 <= live.cap) AS counted,
        usage_row.count + 1 AS used
    FROM live, usage_row WHERE {READ_ADMITTED}
)"""  # noqa: S608 (a condition of the statements' own text)


# An upsert, as METERED: it locks the row as it is by then, where an UPDATE would recheck its
# whole plan against the newer row (which, with every call of a workspace counting on this row, it
# nearly always finds). The row is there (`usage_row` read it); were it gone, the call is counted anew.
BOTH = f"""metered AS (
    INSERT INTO {_USAGE} AS u (workspace_id, period, kind, count)
    SELECT live.workspace, %(period)s, %(kind)s, CASE WHEN second.counted THEN 2 ELSE 1 END FROM second, live
    ON CONFLICT (workspace_id, period, kind) DO UPDATE SET count = u.count + excluded.count
    WHERE (SELECT cap FROM live) IS NULL OR u.count + excluded.count <= (SELECT cap FROM live)
    RETURNING u.count
)"""  # noqa: S608 (as METERED)
# NULL for a call not admitted, 1 when `metered` counted it; an admitted call it did not count fails
# the statement. The divisor is read at run time, so no plan folds it.
CHECKED = "(SELECT 1 / (SELECT COUNT(*) FROM metered)::integer FROM second)"
