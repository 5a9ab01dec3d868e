"""pgqueuer's dequeue rate: drain N no-op jobs with W workers at a batch size (its own
benchmark's "drain" strategy), timed from the first job's start to the last's.
Run with the bench environment's interpreter; prints one JSON line.

    python bench/peers/pgqueuer_drain.py DSN JOBS BATCH WORKERS
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

import psycopg
from pgqueuer import PgQueuer, PsycopgDriver, Queries
from pgqueuer.models import Job
from pgqueuer.types import QueueExecutionMode


async def connect(dsn: str) -> PsycopgDriver:
    return PsycopgDriver(await psycopg.AsyncConnection.connect(conninfo=dsn, autocommit=True))


async def main(dsn: str, jobs: int, batch: int, workers: int) -> dict[str, object]:
    queries = Queries(await connect(dsn))
    try:
        await queries.install()
    except psycopg.errors.DuplicateObject:
        pass  # installed by an earlier round
    except psycopg.errors.DuplicateTable:
        pass
    await queries.clear_queue()
    await queries.enqueue(["noop"] * jobs, [b""] * jobs, [0] * jobs)
    done = 0
    first = last = 0.0
    managers = []
    for _ in range(workers):
        pgq = PgQueuer(await connect(dsn))

        @pgq.entrypoint("noop")
        async def noop(job: Job) -> None:
            nonlocal done, first, last
            last = time.perf_counter()
            first = first or last
            done += 1

        managers.append(pgq)
    began = time.perf_counter()
    await asyncio.gather(*(m.run(batch_size=batch, mode=QueueExecutionMode.drain) for m in managers))
    total = time.perf_counter() - began
    # First job to last: the workers' start-up and the drain's empty-queue check are not dequeuing.
    elapsed = last - first
    return {
        "jobs": done - 1, "elapsed": elapsed, "rate": (done - 1) / elapsed, "total_seconds": total,
        "batch": batch, "workers": workers,
    }  # fmt: skip


if __name__ == "__main__":
    dsn, jobs, batch, workers = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    print(json.dumps(asyncio.run(main(dsn, jobs, batch, workers))))
