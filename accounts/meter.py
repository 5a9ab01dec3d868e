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
