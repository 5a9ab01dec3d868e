"""The MCP call's overhead: Weft's no-op tool against the bare SDK's, and start_task against the no-op.

All three at concurrency 1 (latency) and the two no-ops at 16 (throughput), interleaved. Weft's
no-op runs the whole gate (token, connection, seat and workspace checks, usage meter) around no
service; the bare SDK's runs nothing but the SDK.
"""

from __future__ import annotations

from asgiref.sync import sync_to_async

from bench import infra, seed
from bench.driver import McpClient, drive, timed
from bench.harness import Context, interleave, report
from bench.stats import ratio


async def run(ctx: Context) -> None:
    count, warmup = (40, 8) if ctx.quick else (300, 30)
    hot = (96, 16) if ctx.quick else (800, 48)
    where = await sync_to_async(seed.place)("MCP")
    agent = await sync_to_async(seed.agent)(where, ctx.resource, "mcp-bench")
    todo = await sync_to_async(seed.tasks)(where, (count + warmup) * (ctx.rounds + 1) + 50, column="todo")
    ids = iter(todo)
    with infra.weft_server(ctx.cluster.url, ctx.redis_url, ctx.port) as weft, infra.bare_server() as bare:
        weft_clients = [McpClient(weft.base, agent.token) for _ in range(16)]
        bare_clients = [McpClient(bare.base) for _ in range(16)]

        def noop(clients: list[McpClient], concurrency: int, n: int, w: int):  # type: ignore[no-untyped-def]
            return lambda: drive(
                lambda i: timed(clients[i].call("noop")), concurrency=concurrency, count=n, warmup=w
            )

        def start() -> object:
            return drive(
                lambda i: timed(weft_clients[0].call("start_task", {"id": next(ids)})),
                concurrency=1, count=count, warmup=warmup,
            )  # fmt: skip

        pid = weft.proc.pid
        summaries = await interleave(
            ctx,
            {
                "weft noop c=1": (noop(weft_clients, 1, count, warmup), pid),
                "bare SDK noop c=1": (noop(bare_clients, 1, count, warmup), bare.proc.pid),
                "weft start_task c=1": (start, pid),  # type: ignore[dict-item]
                "weft noop c=16": (noop(weft_clients, 16, hot[0], hot[1]), pid),
                "bare SDK noop c=16": (noop(bare_clients, 16, hot[0], hot[1]), bare.proc.pid),
            },
        )
        for client in weft_clients + bare_clients:
            await client.aclose()
    w, b, s = summaries["weft noop c=1"], summaries["bare SDK noop c=1"], summaries["weft start_task c=1"]
    ratios = [
        ("weft noop p50 / bare p50", ratio(w.p50_ms, b.p50_ms), "—"),
        ("weft noop p50 − bare p50 (ms)", w.p50_ms - b.p50_ms, "≤ 1.5"),
        ("start_task p50 − weft noop p50 (ms)", s.p50_ms - w.p50_ms, "≤ 2"),
        (
            "weft noop c=16 req/s / bare req/s",
            ratio(summaries["weft noop c=16"].rate, summaries["bare SDK noop c=16"].rate),
            "—",
        ),
    ]
    report(
        ctx,
        "mcp",
        summaries,
        ratios,
        "Each call its own JSON-RPC POST over a keep-alive connection; the server's CPU per call is the"
        " uvicorn process's user+system time over the series divided by the calls.",
    )
