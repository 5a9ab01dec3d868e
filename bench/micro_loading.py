"""The two loading steps every pooled statement pays, each beside what it replaced, A B A B.

    python -m bench.micro_loading [--rounds N] [--calls N]

1. A row to a model instance: `events.instance_from_row` (the instance's __dict__ filled) against
   `Model.from_db` (Django's constructor, a setattr per column), for Task and Run rows as the claim
   reads them.
2. A pooled statement's cursor: the connection's kept cursor (`apool._fetch_with`) against a new
   raw cursor per statement, for the claim's row shape (a task and a run, 41 columns) on a
   throwaway PostgreSQL.

Each round times both sides, the order alternating; the table gives each side's median over the
rounds of CPU microseconds per call (process time: what the server's one event loop spends), and
their ratio. Nothing else runs in the process.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from contextlib import ExitStack
from functools import partial
from typing import Any

from django.db import models

from bench.stats import median, ratio


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=5000)
    args = parser.parse_args(argv)
    from bench.run import services

    with ExitStack() as stack:
        services(stack)
        rows = _rows()
        results = [
            *_instances(rows, args.rounds, args.calls),
            *asyncio.run(_cursors(args.rounds, args.calls)),
        ]
    print(f"{'step':<34} {'before µs':>10} {'after µs':>10} {'after/before':>13}")
    for name, before, after in results:
        print(f"{name:<34} {before:>10.1f} {after:>10.1f} {ratio(after, before):>13.3f}")
    return 0


def _rows() -> dict[str, tuple[type[models.Model], list[Any]]]:
    """A Task and a Run row as the database returns them (one of each, read back)."""
    from django.utils import timezone

    from bench import seed
    from boards.models import Run, Task
    from weft.events import row_loading

    now = timezone.now()
    place = seed.place("Micro")
    agent = seed.agent(place, "http://127.0.0.1/api/mcp", "micro")
    task = Task.objects.get(pk=seed.tasks(place, 1, column="todo")[0])
    run = Run.objects.create(
        workspace_id=task.workspace_id, task=task, connection_id=agent.connection_id,
        lease_token_hash="x" * 64, epoch=1, state="active",
        started_at=now, last_heartbeat_at=now, lease_expires_at=now,
    )  # fmt: skip
    return {
        model.__name__: (model, list(model.objects.filter(pk=pk).values_list(*row_loading(model)[0]).get()))
        for model, pk in ((Task, task.pk), (Run, run.pk))
    }


def _timed(fn: Callable[[], Any], calls: int) -> float:
    began = time.process_time()
    for _ in range(calls):
        fn()
    return 1e6 * (time.process_time() - began) / calls


def _instances(
    rows: dict[str, tuple[type[models.Model], list[Any]]], rounds: int, calls: int
) -> list[tuple[str, float, float]]:
    from django.db import DEFAULT_DB_ALIAS

    from weft.events import instance_from_row, row_loading

    results = []
    for name, (model, values) in rows.items():
        names = row_loading(model)[0]
        sides: dict[str, Callable[[], Any]] = {
            "before": partial(lambda m, n, v: m.from_db(DEFAULT_DB_ALIAS, n, list(v)), model, names, values),
            "after": partial(instance_from_row, model, values),
        }
        times: dict[str, list[float]] = {"before": [], "after": []}
        for r in range(rounds):
            for side in ("before", "after") if r % 2 == 0 else ("after", "before"):
                times[side].append(_timed(sides[side], calls))
        results.append((f"{name} row → instance", median(times["before"]), median(times["after"])))
    return results


async def _cursors(rounds: int, calls: int) -> list[tuple[str, float, float]]:
    import psycopg

    from boards.models import Run, Task
    from boards.services.fast import _cols
    from weft import apool

    # The claim's row: every column of a task and of a run, as CLAIM_SQL's final SELECT reads them.
    sql = (
        f"SELECT {_cols(Task, 't')}, {_cols(Run, 'r')} FROM boards_task t, boards_run r "
        "WHERE r.task_id = t.id LIMIT 1"
    )
    statement = apool.positional(sql)
    pool = await apool._open_pool()
    try:
        async with pool.connection() as conn:

            async def kept() -> None:
                await apool._fetch_with(conn, statement, [], None)

            async def fresh() -> None:
                async with psycopg.AsyncRawCursor(conn) as cursor:
                    await cursor.execute(statement.text, [], prepare=None)
                    await cursor.fetchone()

            sides: dict[str, list[float]] = {"before": [], "after": []}
            for r in range(rounds):
                for side, fn in (
                    (("before", fresh), ("after", kept))
                    if r % 2 == 0
                    else (("after", kept), ("before", fresh))
                ):
                    sides[side].append(await _timed_async(fn, calls))
    finally:
        await apool.close_pool()
    return [("claim row on a pooled connection", median(sides["before"]), median(sides["after"]))]


async def _timed_async(fn: Callable[[], Awaitable[None]], calls: int) -> float:
    for _ in range(50):
        await fn()
    began = time.process_time()
    for _ in range(calls):
        await fn()
    return 1e6 * (time.process_time() - began) / calls


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
