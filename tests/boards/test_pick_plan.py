"""startNext's claim statement keeps an index plan when PostgreSQL caches a generic plan for it.

The loop's pool prepares its statements (weft.apool), and after a few runs PostgreSQL may plan a
prepared statement once for any parameters. A pick that filtered Todo through a parameter could not
use the partial `task_best_next` index (its predicate is `column = 'todo'`): its generic plan read
and sorted every task of the workspace, 12 ms a call at 6,000 tasks. auto_explain, at NOTICE,
hands the plan the statement ran with to the client that ran it.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

import psycopg
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from boards.models import Run, RunState, Task
from boards.services import fast, fast_next, work

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("on_postgres")]


def _executed_plan(sql: str, params: dict[str, Any], *, generic: bool) -> str:
    """The plan PostgreSQL ran `sql` with, prepared and (when `generic`) planned for any values."""
    notices: list[str] = []
    settings = connection.settings_dict
    with psycopg.connect(
        dbname=settings["NAME"],
        user=settings["USER"],
        password=settings["PASSWORD"],
        host=settings["HOST"],
        port=settings["PORT"],
    ) as conn:
        conn.add_notice_handler(lambda diag: notices.append(diag.message_primary or ""))
        conn.execute("LOAD 'auto_explain'")
        conn.execute("SET auto_explain.log_min_duration = 0")
        conn.execute("SET auto_explain.log_level = notice")
        conn.execute("SET auto_explain.log_nested_statements = on")
        mode = "force_generic_plan" if generic else "force_custom_plan"
        conn.execute(f"SET plan_cache_mode = {mode}")
        conn.execute(sql, params, prepare=True)
        conn.rollback()
    plans = [n for n in notices if "pick" in n or "task_best_next" in n or "boards_task" in n]
    assert plans, notices
    return "\n".join(plans)


def test_the_pick_reads_the_best_next_index_under_a_generic_plan(agent, make_task):
    """A custom plan is the planner's choice for a table this small (it may scan); a generic plan
    that cannot use the index at all is the bug this keeps out."""
    for n in range(40):
        make_task(f"t{n}", column="todo")
    _past_runs(agent, make_task("done", column="done"), 1000)
    params = fast_next._next_params(workspace_id=agent.workspace_id, connection_id=agent.pk, cap=None)
    plan = _executed_plan(fast_next.NEXT_CLAIM_SQL, params, generic=True)
    assert "task_best_next" in plan
    assert "Sort" not in plan
    assert "Seq Scan on boards_run" not in plan, plan


@pytest.fixture
def runs_look_few_per_workspace(on_postgres):
    """Statistics that say a workspace holds about one run (a young table, or one shared by many
    workspaces): the workspace's index then costs what the run's own does, and a plan may take it."""
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE boards_run ALTER COLUMN workspace_id SET (n_distinct = -1)")
    yield
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE boards_run ALTER COLUMN workspace_id RESET (n_distinct)")
        cursor.execute("ANALYZE boards_run")


@pytest.mark.usefixtures("runs_look_few_per_workspace")
def test_the_pick_reads_only_the_connections_live_runs(agent, make_task):
    """Whether the caller holds a live run is read from the live runs alone: through the workspace's
    runs, the check grew with every run the workspace had ended (2,185 rows filtered one pick of a
    15 s profile at 16 agents, and startNext slowed round after round in the bench)."""
    make_task("next", column="todo")
    _past_runs(agent, make_task("done", column="done"), 1000)
    params = fast_next._next_params(workspace_id=agent.workspace_id, connection_id=agent.pk, cap=None)
    for generic in (True, False):
        plan = _executed_plan(fast_next.NEXT_CLAIM_SQL, params, generic=generic)
        assert "using run_live_by_connection" in plan, plan


def _lists() -> dict[str, Any]:
    names = ("artifacts", "claims", "not_done", "unknowns", "not_accepted", "verification")
    return {name: [] for name in names} | {"passed": None}


@pytest.mark.usefixtures("runs_look_few_per_workspace")
def test_the_completion_finds_its_run_by_run_id(agent, make_task):
    """The run is found by its unique run_id, the workspace checked on that row: read through the
    workspace's index, the completion walked the workspace's runs (1,631 to 3,583 rows filtered a
    call in a 15 s profile at 16 agents)."""
    _past_runs(agent, make_task("done", column="done"), 200)
    params = fast._complete_params(
        workspace_id=agent.workspace_id,
        run_id=uuid.uuid4(),
        lease_token="x",
        outcome="done",
        next_step="",
        lists=_lists(),
    )
    for generic in (True, False):
        plan = _executed_plan(fast.COMPLETE_SQL, params, generic=generic)
        # By run_id, or (a custom plan's choice) through the few live runs: never the ended ones.
        reads = re.findall(r"(Seq Scan|using \w+) on boards_run r\b", plan)
        assert reads and set(reads) <= {"using boards_run_run_id_key", "using one_live_run_per_task"}, plan


@pytest.fixture
def mostly_done(on_postgres, make_task, ws_b) -> None:
    """The bench's later rounds: other workspaces' tasks in the table, most of this one's done, and
    the boards without statistics (a workspace's few boards never reach autovacuum's threshold)."""
    template = make_task("first", column="todo")
    _more_tasks(template, "todo", 600)
    _more_tasks(template, "done", 2000)
    _more_tasks(make_task("theirs", column="todo", workspace=ws_b), "done", 6000)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE boards_task")


@pytest.mark.usefixtures("mostly_done")
def test_the_pick_keeps_to_the_index_beside_other_workspaces(agent):
    """Joined to its board, the pick was estimated to keep three rows past the live-board check,
    and read every task of the workspace through its workspace index and sorted them (3–7 ms a
    claim at 2,700 tasks; startNext 445 → 283 /s over the bench's five rounds)."""
    params = fast_next._next_params(workspace_id=agent.workspace_id, connection_id=agent.pk, cap=None)
    for generic in (True, False):
        plan = _executed_plan(fast_next.NEXT_CLAIM_SQL, params, generic=generic)
        assert "using task_best_next" in plan, plan
        assert "Sort" not in plan, plan


@pytest.mark.usefixtures("mostly_done")
def test_get_my_works_best_next_keeps_to_the_index_beside_other_workspaces(agent):
    """The ORM's pick (get_my_work, and startNext where the statement does not apply) had the
    same join and the same plan."""
    with CaptureQueriesContext(connection) as queries:
        assert work._best_next(agent.workspace_id) is not None
    (sql,) = [query["sql"] for query in queries.captured_queries if "ORDER BY" in query["sql"]]
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN {sql}")
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "using task_best_next" in plan, plan
    assert "Sort" not in plan, plan


def _more_tasks(template: Task, column: str, count: int) -> None:
    """`count` tasks on `template`'s board in `column`, written at once."""
    Task.objects.bulk_create(
        Task(workspace_id=template.workspace_id, board_id=template.board_id, title=f"{column} {n}",
             column=column, position=template.position + n + 1)
        for n in range(count)
    )  # fmt: skip


def _past_runs(agent, task, count: int) -> None:
    """`count` ended runs of `task`, and the statistics that know of them (a bench's history)."""
    now = timezone.now()
    Run.objects.bulk_create(
        Run(workspace_id=agent.workspace_id, task=task, connection=agent, epoch=n, state=RunState.COMPLETED,
            started_at=now, last_heartbeat_at=now, lease_expires_at=now, ended_at=now)
        for n in range(count)
    )  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE boards_run")


def test_the_claim_finds_its_task_by_id_under_a_generic_plan(agent, make_task):
    """The claim by id reads the task by its primary key, never by (workspace, column, priority),
    and looks for a live run of it through an index: with the live states as a parameter, a generic
    plan read every run of the table (12 ms a claim in the 16-agent bench, the runs of five rounds)."""
    for n in range(40):
        make_task(f"t{n}", column="todo")
    _past_runs(agent, make_task("done", column="done"), 1000)
    params = fast.claim_params(
        workspace_id=agent.workspace_id, task_id=1, connection_id=agent.pk, run_id=uuid.uuid4()
    )
    plan = _executed_plan(fast.CLAIM_SQL, params, generic=True)
    assert "boards_task_pkey" in plan, plan
    assert "boards_task_workspa" not in plan, plan
    assert "Seq Scan on boards_run" not in plan, plan
