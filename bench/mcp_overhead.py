"""What the MCP surface costs: start_task against a no-op tool, same transport, same process.

Run with `make bench-mcp` (a throwaway PostgreSQL; DATABASE_URL set). Starts Weft under uvicorn
with the benchmark's no-op tool registered, seeds a Pro workspace with one agent connection and
enough Todo tasks, then calls each tool at concurrency 1 and 16 and prints p50, p99 and req/s.

The server runs as in production: its own process (one uvicorn worker; this process only
generates load), PostgreSQL through psycopg's pool, debug off with a SECRET_KEY. Each tool and
concurrency starts with untimed warm-up calls over the same HTTP client.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "weft.settings")
os.environ.setdefault("WEFT_TESTING", "1")  # no connection pool in this seeding process

import logging  # noqa: E402

import django  # noqa: E402
import httpx  # noqa: E402

logging.getLogger("httpx").setLevel(logging.WARNING)

REQUESTS = {1: 200, 16: 800}
WARMUP = 20  # untimed calls before each measured series


def seed(resource: str) -> tuple[str, list[int]]:
    from django.utils import timezone
    from oauth2_provider.models import AccessToken, Application

    from accounts.connections import connection_authorize
    from accounts.models import User
    from accounts.services import workspace_create
    from boards.models import Task
    from boards.services import board_default

    user = User.objects.create_user(email=f"bench-{secrets.token_hex(4)}@example.com", password="x")
    workspace = workspace_create(owner=user, name="Bench", plan_code="pro")
    app = Application.objects.create(
        name="bench", client_type="public", authorization_grant_type="authorization-code",
        redirect_uris="http://127.0.0.1/cb",
    )  # fmt: skip
    connection_authorize(user=user, application=app, workspace=workspace)
    token = secrets.token_urlsafe(32)
    AccessToken.objects.create(
        user=user, application=app, token=token, expires=timezone.now() + timedelta(hours=2),
        scope="mcp", resource=[resource],
    )  # fmt: skip
    board = board_default(workspace=workspace)
    tasks = Task.objects.bulk_create(
        [
            Task(workspace=workspace, board=board, title=f"Bench task {i}")
            for i in range(sum(REQUESTS.values()) + WARMUP * len(REQUESTS))
        ]
    )
    return token, [t.pk for t in tasks]


async def measure(base: str, token: str, tool: str, args_for, concurrency: int, total: int) -> dict:  # type: ignore[no-untyped-def]
    headers = {
        "authorization": f"Bearer {token}",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2025-06-18",
    }
    latencies: list[float] = []
    counter = iter(range(total))
    errors = 0

    async def call(client: httpx.AsyncClient, i: int) -> bool:
        body = {
            "jsonrpc": "2.0",
            "id": i,
            "method": "tools/call",
            "params": {"name": tool, "arguments": args_for(i)},
        }
        response = await client.post("/api/mcp", json=body, headers=headers)
        return response.status_code == 200 and not response.json()["result"].get("isError")

    async def worker(client: httpx.AsyncClient, ids: Iterator[int], *, timed: bool = True) -> None:
        nonlocal errors
        for i in ids:
            start = time.perf_counter()
            ok = await call(client, i)
            if timed:
                latencies.append(time.perf_counter() - start)
                errors += not ok

    limits = httpx.Limits(max_connections=concurrency)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as client:
        # Warm-up, not timed: opens the HTTP connections and the database pool, runs the code paths.
        warmup = iter(range(-WARMUP, 0))
        await asyncio.gather(*(worker(client, warmup, timed=False) for _ in range(concurrency)))
        began = time.perf_counter()
        await asyncio.gather(*(worker(client, counter) for _ in range(concurrency)))
        elapsed = time.perf_counter() - began
    latencies.sort()
    return {
        "p50": statistics.median(latencies) * 1000,
        "p99": latencies[int(len(latencies) * 0.99) - 1] * 1000,
        "rps": total / elapsed,
        "errors": errors,
    }


def main() -> int:
    if not os.environ.get("DATABASE_URL"):
        print("Set DATABASE_URL (make bench-mcp starts a throwaway PostgreSQL).", file=sys.stderr)
    from tests.mcp.server_process import uvicorn_server

    # Production settings: debug off (no query log), so a SECRET_KEY is required.
    env = {
        "WEFT_MCP_BENCH_NOOP": "1",
        "DATABASE_URL": os.environ.get("DATABASE_URL", ""),
        "WEFT_DEBUG": "0",
        "SECRET_KEY": secrets.token_urlsafe(50),
    }
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        env={**os.environ, **env},
    )
    with uvicorn_server(env) as base:
        os.environ["WEFT_BASE_URL"] = base
        django.setup()
        token, task_ids = seed(f"{base}/api/mcp")
        ids = iter(task_ids)
        database = "PostgreSQL (psycopg pool)" if os.environ.get("DATABASE_URL") else "SQLite"
        print(f"Weft MCP overhead — {base}/api/mcp, one uvicorn worker, {os.cpu_count()} CPUs")
        print(f"server: debug off, {database}; {WARMUP} warm-up calls per series, not timed")
        print(f"{'tool':<12}{'conc':>5}{'reqs':>6}{'p50 ms':>9}{'p99 ms':>9}{'req/s':>8}{'errors':>7}")
        for concurrency, total in REQUESTS.items():
            for tool in ("noop", "start_task"):
                args = (lambda i: {}) if tool == "noop" else (lambda i: {"id": next(ids)})
                r = asyncio.run(measure(base, token, tool, args, concurrency, total))
                print(
                    f"{tool:<12}{concurrency:>5}{total:>6}{r['p50']:>9.1f}{r['p99']:>9.1f}{r['rps']:>8.1f}{r['errors']:>7}"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
