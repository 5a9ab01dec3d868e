"""startNext's claim as one statement (PostgreSQL): the call metered, get_my_work's best next task
picked and claimed as `fast.CLAIM_SQL` claims an id.

The statement is CLAIM_SQL with the pick in place of the id, so the claim's rules stay stated
once (boards.services.fast); tests/boards/test_in_loop.py compares it with the ORM path
(`next_task.task_claim_next`), and tests/boards/test_pick_plan.py keeps its plan on the index.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import Any, Literal

from django.utils import timezone

from accounts import meter
from accounts.models import Usage, month_start
from boards.models import Column, Run, Task
from boards.services import fast
from boards.services.fast import (
    BY_ID_CHECKS,
    CLAIM_SQL,
    COMPLETE_SQL,
    LIVE_IN,
    claim_params,
    one_line,
)
from boards.services.fast_rows import (
    CLAIM_FINAL,
    CLAIM_RUN,
    COMPLETE_FINAL,
    Completed,
    claimed_row,
    completed_from,
    completed_width,
)
from weft import apool
from weft.relay_loop import relay_soon

# startNext's claim when nothing comes before the best next task (boards.services.work's order of
# precedence): the connection holds no live run and has no unused approval and no answer to hand
# over. Then the task is get_my_work's best next one (`work._best_next`: Todo on a live board, in
# the order of the `task_best_next` index), locked SKIP LOCKED as there, and claimed as CLAIM_SQL
# claims an id. In any other state the statement changes nothing and the ORM path runs. Todo is
# written into the text, not passed: only then can a generic plan use the partial index. The live
# board is a check on each task, not a join: joined to boards without statistics, the pick was
# estimated to keep three rows and sorted the workspace's tasks (tests/boards/test_pick_plan.py).
PICK = f"""pick AS (
    SELECT t.id FROM boards_task t
    WHERE {meter.ADMITTED} AND t.workspace_id = %(ws)s AND t."column" = '{Column.TODO}'
      AND (SELECT b.archived_at IS NULL FROM boards_board b WHERE b.id = t.board_id)
      AND NOT EXISTS (SELECT 1 FROM boards_run r WHERE r.workspace_id = %(ws)s AND r.connection_id = %(conn)s
                      AND r.state {LIVE_IN})
      AND NOT EXISTS (SELECT 1 FROM boards_approval p WHERE p.connection_id = %(conn)s AND p.used_at IS NULL)
      AND NOT EXISTS (SELECT 1 FROM boards_question q WHERE q.connection_id = %(conn)s
                      AND q.state = 'answered' AND q.delivered_at IS NULL)
    ORDER BY t.priority DESC, t.due_at ASC NULLS LAST, t.position, t.id
    LIMIT 1 FOR UPDATE OF t SKIP LOCKED
),
"""  # noqa: S608 (a constant of the model, no input)
# startNext's claim is counted as the agent call it replaces (boards.services.next_task), in the
# same statement: accounts.meter's CTEs over the workspace and cap the call's gate read (it checked
# the rest). A refused meter claims nothing; the one row says whether the call was counted, the
# count before it (a refusal's `used`), then the claimed task and run, or NULLs.
NEXT_METER = """live AS (SELECT %(ws)s::bigint AS workspace, %(cap)s::integer AS cap, false AS suspended),
"""
NEXT_SELECT = (
    f"SELECT {meter.ADMITTED}, {meter.USED}, task.*, {CLAIM_RUN} "  # noqa: S608 (no input, as CLAIM_SQL)
    "FROM live LEFT JOIN task ON true LEFT JOIN run ON true"
)


def _swap(sql: str, old: str, new: str) -> str:
    """`sql` with its one `old` (as one line) replaced: a claim statement that changed shape fails here."""
    old = one_line(old)
    assert sql.count(old) == 1, old
    return sql.replace(old, one_line(new))


NEXT_CLAIM_SQL = _swap(
    _swap(
        _swap(
            _swap(CLAIM_SQL, "attention AS (", f"{NEXT_METER}{meter.METERED}, {PICK}attention AS ("),
            "WHERE t.id = %(task)s AND",
            "WHERE t.id = (SELECT id FROM pick) AND",
        ),
        BY_ID_CHECKS,
        "",
    ),
    CLAIM_FINAL,
    NEXT_SELECT,
)


@dataclass(frozen=True)
class NextPick:
    """startNext's statement: whether the call was counted, the count before it, and the claim
    (None when the meter refused or the state is not the common one: nothing changed but the count)."""

    admitted: bool
    used: int
    claimed: tuple[Task, Run] | None


async def claim_next_in_loop(*, workspace_id: int, connection_id: int, cap: int | None) -> NextPick:
    """startNext's claim of the best next task from the event loop (NEXT_CLAIM_SQL), metered under
    `cap` (the workspace plan's, None for none) in the same statement."""
    params = _next_params(workspace_id=workspace_id, connection_id=connection_id, cap=cap)
    # Prepared like every statement: the pick names Todo as a literal, so its generic plan can read
    # the partial `task_best_next` index (with Todo as a parameter it sorted the workspace's tasks).
    row = await apool.fetch_one(NEXT_CLAIM_SQL, params)
    assert row is not None  # the statement answers one row: `live` has one
    admitted, used, *claim = row
    if claim[0] is None:
        return NextPick(admitted=admitted, used=used, claimed=None)
    relay_soon()
    run = {"workspace_id": workspace_id, "connection_id": connection_id, "run_id": params["run_id"]}
    return NextPick(admitted=admitted, used=used, claimed=claimed_row(tuple(claim), **run))


def _next_params(*, workspace_id: int, connection_id: int, cap: int | None) -> dict[str, Any]:
    """NEXT_CLAIM_SQL's parameters: the claim's, and the meter's month (this server's, as the gate's)."""
    params = claim_params(
        workspace_id=workspace_id, task_id=0, connection_id=connection_id, run_id=uuid.uuid4()
    )
    return {**params, "cap": cap, "period": month_start(timezone.now().date()), "kind": Usage.AGENT_CALLS}


# complete_task with startNext as one statement, when the call's gate rides on it: the completion
# (fast.COMPLETE_SQL) and then startNext's claim (NEXT_CLAIM_SQL's pick and claim), one
# transaction, the call and the claim counted at once on the month's usage row as its last write
# (accounts.meter.READ, weft.mcp.gate.carrying_counted). The claim's part sees what the
# completion's part wrote as a second statement would: it runs only once the completion went
# through (`second`, the claim's count, reads the completed run), its pick leaves out the run just
# completed, its attention budget counts the review item just opened, and its event row follows
# the completion's. In any other state the claim's part claims nothing and the caller goes on as
# after a completion alone.
def _renamed(sql: str, names: dict[str, str]) -> str:
    """`sql` with the CTEs and parameters in `names` renamed outside its string literals."""
    parts = sql.split("'")
    for i in range(0, len(parts), 2):
        for old, new in names.items():
            parts[i] = re.sub(rf"(?<![\w.%]){re.escape(old)}(?!\w)", new, parts[i])
    return "'".join(parts)


def _claim_after_completion() -> str:
    """NEXT_CLAIM_SQL's pick and claim as CTEs that follow the completion's."""
    pick = _swap(PICK, meter.ADMITTED, "EXISTS (SELECT 1 FROM second WHERE second.counted)")
    pick = _swap(pick, f"r.state {LIVE_IN})", f"r.state {LIVE_IN} AND r.run_id <> %(completed)s)")
    claim = _swap(
        apool.ctes_of(CLAIM_SQL, CLAIM_FINAL),
        "WHERE t.id = %(task)s AND",
        "WHERE t.id = (SELECT id FROM pick) AND",
    )
    claim = _swap(
        _swap(claim, BY_ID_CHECKS, ""),
        "SELECT COUNT(i.id) AS waiting, COALESCE(SUM(i.estimated_minutes), 0) AS minutes,",
        "SELECT COUNT(i.id) + (SELECT COUNT(*) FROM item) AS waiting, COALESCE(SUM(i.estimated_minutes), 0)"
        " + COALESCE((SELECT SUM(item.estimated_minutes) FROM item), 0) AS minutes,",
    )
    claim = _renamed(
        f"{one_line(pick)} {claim}",
        {"task": "next_task", "run": "next_run", "event": "next_event", "%(run_id)s": "%(next_run_id)s"},
    )
    claim = _renamed(claim, {"%(completed)s": "%(run_id)s"})
    return _swap(
        claim, "FROM next_run, clock )", "FROM next_run, clock WHERE (SELECT COUNT(*) FROM event) > 0 )"
    )


# The completion's row (COMPLETE_FINAL's), the claim's count, the claim's row.
_NEXT_RUN = _renamed(CLAIM_RUN, {"run": "next_run"})
COMPLETE_NEXT_FINAL = _swap(
    _swap(
        COMPLETE_FINAL,
        "item.estimated_minutes FROM run",
        f"item.estimated_minutes, second.counted, second.used, next_task.*, {_NEXT_RUN} FROM run",
    ),
    "LEFT JOIN item ON true",
    "LEFT JOIN item ON true LEFT JOIN second ON true LEFT JOIN next_task ON true LEFT JOIN next_run ON true",
)


def _complete_next_sql() -> str:
    # The completion's events return a row each, so the claim's event can follow them.
    completion = _swap(
        apool.ctes_of(COMPLETE_SQL, COMPLETE_FINAL), "ORDER BY e.ord )", "ORDER BY e.ord RETURNING 1 )"
    )
    counts = [one_line(meter.second("EXISTS (SELECT 1 FROM run)")), one_line(meter.BOTH)]
    return " ".join(
        [apool.CLOCK, ", ".join([completion, *counts, _claim_after_completion()]), COMPLETE_NEXT_FINAL]
    )


COMPLETE_NEXT_SQL = _complete_next_sql()
_COMPLETION_WIDTH = completed_width()


async def complete_next_in_loop(
    *,
    connection_id: int,
    workspace_id: int,
    run_id: Any,
    lease_token: str,
    outcome: str,
    next_step: str,
    lists: dict[str, Any],
) -> tuple[Completed, NextPick] | Literal[False] | None:
    """complete_task with startNext as one statement (COMPLETE_NEXT_SQL), the call's gate riding
    on it: the completion and startNext's pick. None: the completion is not the common one and
    nothing changed but the meter (as `fast.complete_in_loop`). False: the statement could not run
    (the gate has run already, the month has no usage row yet) and nothing changed."""
    params = fast.completion_of(workspace_id, run_id, lease_token, outcome, next_step, lists)
    if params is None:
        return None
    of_claim = claim_params(
        workspace_id=workspace_id, task_id=0, connection_id=connection_id, run_id=uuid.uuid4()
    )
    params |= {"next_run_id": of_claim["run_id"], **{k: of_claim[k] for k in ("conn", "ipad", "opad")}}
    row = await apool.fetch_counted(COMPLETE_NEXT_SQL, params, final=COMPLETE_NEXT_FINAL)
    if row is None or row is False:
        return row
    relay_soon()
    counted, used, *claim = row[_COMPLETION_WIDTH:]
    run = {"workspace_id": workspace_id, "connection_id": connection_id, "run_id": params["next_run_id"]}
    claimed = claimed_row(tuple(claim), **run) if claim[0] is not None else None
    completed = completed_from(row, params, lists)
    return completed, NextPick(admitted=bool(counted), used=used, claimed=claimed)
