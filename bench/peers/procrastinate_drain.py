"""procrastinate's dequeue rate: one worker with concurrency W drains N no-op jobs, timed from the
first job's start to the last's. Run with the bench environment's interpreter; prints one JSON line.

    python bench/peers/procrastinate_drain.py DSN JOBS CONCURRENCY
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time

import procrastinate
import psycopg

done = 0
first = last = 0.0


async def main(dsn: str, jobs: int, concurrency: int) -> dict[str, object]:
    app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=dsn))

    @app.task(name="noop")
    async def noop() -> None:
        global done, first, last
        last = time.perf_counter()
        first = first or last
        done += 1

    async with app.open_async():
        # Applied by an earlier round when it fails.
        with contextlib.suppress(psycopg.errors.DuplicateObject, procrastinate.exceptions.ConnectorException):
            await app.schema_manager.apply_schema_async()
        await noop.batch_defer_async(*([{}] * jobs))
        began = time.perf_counter()
        await app.run_worker_async(concurrency=concurrency, wait=False, install_signal_handlers=False)
        total = time.perf_counter() - began
    # First job to last, as for pgqueuer: start-up and the final empty poll are not dequeuing.
    elapsed = last - first
    return {
        "jobs": done - 1, "elapsed": elapsed, "rate": (done - 1) / elapsed, "total_seconds": total,
        "concurrency": concurrency,
    }  # fmt: skip


if __name__ == "__main__":
    dsn, jobs, concurrency = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    print(json.dumps(asyncio.run(main(dsn, jobs, concurrency))))
