"""Push: N web-socket clients in one workspace, each a person's browser session, receive every
event; commit-to-frame latency for 1 client against N.

An agent creates tasks over MCP at a steady pace; every client records when each
`task.created` frame arrives (this machine's clock). The commit time is PostgreSQL's own
(`track_commit_timestamp`: the commit of the transaction that inserted the task row, the one
that wrote its event), so the latency covers the relay, the channel layer (Redis) and the
socket. The clients run in this one process: at N clients their own receive loop is part of
the figure.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import Any

from asgiref.sync import sync_to_async
from websockets.asyncio.client import ClientConnection, connect

from bench import infra, seed
from bench.driver import McpClient
from bench.harness import Context, interleave, report
from bench.stats import Sample, ratio


def _session_cookie(user: Any) -> str:
    from django.test import Client

    client = Client()
    client.force_login(user)
    return str(client.cookies["sessionid"].value)


def _commit_times(cluster: infra.Cluster, task_ids: list[int]) -> dict[int, float]:
    with cluster.connect() as conn:
        rows = conn.execute(
            "SELECT id, extract(epoch FROM pg_xact_commit_timestamp(xmin))::float8 FROM boards_task"
            " WHERE id = ANY(%s)",
            [task_ids],
        ).fetchall()
    return {int(task_id): float(at) for task_id, at in rows if at is not None}


async def _listen(ws: ClientConnection, seen: dict[int, float]) -> None:
    with contextlib.suppress(Exception):
        async for raw in ws:
            at = time.time()
            frame = json.loads(raw)
            if frame.get("event") == "task.created":
                seen[int(frame["entity_id"])] = at


async def push_round(
    ctx: Context, base: str, slug: str, cookie: str, writer: McpClient, clients: int, events: int
) -> Sample:
    uri = base.replace("http://", "ws://") + f"/ws/w/{slug}/"
    headers = {"Cookie": f"sessionid={cookie}"}
    gate = asyncio.Semaphore(25)

    async def open_one() -> ClientConnection:
        async with gate:
            return await connect(uri, origin=base, additional_headers=headers, open_timeout=30)  # type: ignore[arg-type]

    sockets = await asyncio.gather(*(open_one() for _ in range(clients)))
    seen: list[dict[int, float]] = [{} for _ in sockets]
    listeners = [asyncio.create_task(_listen(ws, got)) for ws, got in zip(sockets, seen, strict=True)]
    created: list[int] = []
    began = time.perf_counter()
    try:
        for e in range(events):
            data = await writer.call("create_task", {"title": f"Pushed {e}"})
            created.append(int(data["task"]["id"]))
            await asyncio.sleep(0.05)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(len(got) < len(created) for got in seen):
            await asyncio.sleep(0.05)
    finally:
        for ws in sockets:
            await ws.close()
        for listener in listeners:
            listener.cancel()
    elapsed = time.perf_counter() - began
    commits = await sync_to_async(_commit_times)(ctx.cluster, created)
    sample = Sample(elapsed=elapsed)
    for got in seen:
        for task_id in created:
            if task_id in got and task_id in commits:
                sample.latencies.append(max(got[task_id] - commits[task_id], 0.0))
                sample.completed += 1
            else:
                sample.errors += 1  # a frame that never came
    sample.extra["clients"] = clients
    return sample


async def run(ctx: Context) -> None:
    many, events = (30, 12) if ctx.quick else (200, 60)
    where = await sync_to_async(seed.place)("Push")
    writer_agent = await sync_to_async(seed.agent)(where, ctx.resource, "push-writer")
    cookie = await sync_to_async(_session_cookie)(where.owner)
    with infra.weft_server(ctx.cluster.url, ctx.redis_url, ctx.port) as weft:
        writer = McpClient(weft.base, writer_agent.token)
        slug = where.workspace.slug

        def series(n: int) -> Any:
            return lambda: push_round(ctx, weft.base, slug, cookie, writer, n, events)

        summaries = await interleave(
            ctx,
            {
                "push, 1 client": (series(1), weft.proc.pid),
                f"push, {many} clients": (series(many), weft.proc.pid),
            },
        )
        await writer.aclose()
    one, n = summaries["push, 1 client"], summaries[f"push, {many} clients"]
    ratios = [
        (f"commit-to-frame p99, {many} clients (ms)", n.p99_ms, "≤ 100"),
        (f"p99 {many} clients / 1 client", ratio(n.p99_ms, one.p99_ms), "—"),
    ]
    report(
        ctx,
        "push",
        summaries,
        ratios,
        f"{events} task.created events per round, one every ~50 ms plus the create_task call; per s is"
        " frames received per second of the round; errors are frames that never arrived (each client must"
        " receive every event). Server CPU and SQL per op are per frame delivered.",
    )
