"""Flat to a million: get_my_work, start_task and get_board_state in a workspace of 1k tasks
against one of `large` tasks, with 1k workspaces beside them; and get_my_work for a connection
holding 100 runs against one holding 1.

Both workspaces live in the same tables at the same time, so the ratio isolates the
workspace's own size. Tasks are mostly Done (8 in 10), a tenth each in Todo and Backlog, seeded
in SQL (bench/seed.py). start_task claims a fresh Todo task each call and completes it
untimed, so the connection holds nothing between calls. get_board_state runs last: it reads
the whole board, and past its time cap a call counts as a timeout (its latency a lower bound).
"""

from __future__ import annotations

import time
from typing import Any

from asgiref.sync import sync_to_async

from bench import infra, seed
from bench.driver import HttpError, HttpTimeout, McpClient, ToolError, drive, timed
from bench.harness import Context, interleave, report
from bench.stats import Sample, ratio

SMALL = 1_000


def _seed(ctx: Context, large: int, beside: int, beside_tasks: int, claims: int) -> dict[str, Any]:
    """The workspaces, each with `claims` Todo tasks more for start_task to take (the held one 101)."""
    began = time.perf_counter()
    small_place, large_place, held_place = seed.place("Small"), seed.place("Large"), seed.place("Held")
    seed.tasks(small_place, SMALL)
    seed.tasks(large_place, large)
    seed.tasks(held_place, SMALL)
    seeded: dict[str, Any] = {
        "small_todo": seed.tasks(small_place, claims, column="todo", prefix="Claim"),
        "large_todo": seed.tasks(large_place, claims, column="todo", prefix="Claim"),
        "held_todo": seed.tasks(held_place, 101, column="todo", prefix="Claim"),
    }
    seed.workspaces_beside(small_place, beside, beside_tasks)
    for name, where in (("small", small_place), ("large", large_place), ("held", held_place)):
        seeded[name] = seed.agent(where, ctx.resource, f"{name}-reader")
        seeded[f"{name}_starter"] = seed.agent(where, ctx.resource, f"{name}-starter")
    seeded["held_100"] = seeded["held_starter"]
    seed.analyze()
    seeded["seconds"] = time.perf_counter() - began
    return seeded


async def run(ctx: Context, *, large: int | None = None) -> None:
    large = large or (20_000 if ctx.quick else 1_000_000)
    beside, beside_tasks = (1_000, 10) if ctx.quick else (1_000, 100)
    count, warmup = (12, 3) if ctx.quick else (60, 10)
    board_cap = 30.0 if ctx.quick else 120.0
    print(
        f"  seeding {SMALL} and {large} tasks, {beside} workspaces beside of {beside_tasks} each", flush=True
    )
    seeded = await sync_to_async(_seed)(ctx, large, beside, beside_tasks, (count + warmup) * (ctx.rounds + 1))
    print(f"  seeded in {seeded['seconds']:.1f} s", flush=True)
    with infra.weft_server(ctx.cluster.url, ctx.redis_url, ctx.port) as weft:
        pid = weft.proc.pid

        def client(name: str, timeout: float = 120.0) -> McpClient:
            return McpClient(weft.base, seeded[name].token, timeout=timeout)

        readers = {name: client(name) for name in ("small", "large", "held")}
        starters = {name: client(f"{name}_starter") for name in ("small", "large", "held")}
        todo = {name: iter(seeded[f"{name}_todo"]) for name in ("small", "large", "held")}
        # The held connection: 100 live runs of its own; its peer holds 1.
        for _ in range(100):
            await starters["held"].call("start_task", {"id": next(todo["held"])})
        one = client("held")
        await one.call("start_task", {"id": next(todo["held"])})

        def work(c: McpClient) -> Any:
            return lambda: drive(
                lambda i: timed(c.call("get_my_work")), concurrency=1, count=count, warmup=warmup
            )

        async def start_and_complete(name: str) -> float | None:
            c = starters[name]
            began = time.perf_counter()
            try:
                data = await c.call("start_task", {"id": next(todo[name])})
            except (ToolError, HttpError):
                return None
            seconds = time.perf_counter() - began
            args = {"runId": data["runId"], "leaseToken": data["leaseToken"], "outcome": "Done."}
            await c.call("complete_task", args)
            return seconds

        def start(name: str) -> Any:
            return lambda: drive(
                lambda i: start_and_complete(name), concurrency=1, count=count, warmup=warmup
            )

        summaries = await interleave(
            ctx,
            {
                f"get_my_work, {SMALL} tasks": (work(readers["small"]), pid),
                f"get_my_work, {large} tasks": (work(readers["large"]), pid),
                f"start_task, {SMALL} tasks": (start("small"), pid),
                f"start_task, {large} tasks": (start("large"), pid),
                "get_my_work, 1 held run": (work(one), pid),
                "get_my_work, 100 held runs": (work(starters["held"]), pid),
            },
        )
        boards = {name: client(name, timeout=board_cap) for name in ("small", "large")}
        timed_out: set[str] = set()

        def board(name: str) -> Any:
            async def once(_: int) -> float | None:
                began = time.perf_counter()
                try:
                    await boards[name].call("get_board_state")
                except HttpTimeout:
                    timed_out.add(name)
                    return time.perf_counter() - began  # a lower bound: the call was still running
                except (ToolError, HttpError):
                    return None
                return time.perf_counter() - began

            async def series() -> Sample:
                if name in timed_out:
                    return Sample()  # one timeout is the answer; more would only load the server
                # No warm-up (the S and L series warm the same code), and the time cap ends the series
                # after the call that passed it: at most one call of the large board times out.
                return await drive(once, concurrency=1, count=3 if ctx.quick else 20, max_seconds=board_cap)

            return series

        summaries.update(
            await interleave(
                ctx,
                {
                    f"get_board_state, {SMALL} tasks": (board("small"), pid),
                    f"get_board_state, {large} tasks": (board("large"), pid),
                },
            )
        )
        for c in [*readers.values(), *starters.values(), *boards.values(), one]:
            await c.aclose()

    def p50(name: str) -> float:
        return summaries[name].p50_ms

    def grows(tool: str) -> tuple[str, float, str]:
        return (
            f"{tool} p50, {large} / {SMALL}",
            ratio(p50(f"{tool}, {large} tasks"), p50(f"{tool}, {SMALL} tasks")),
            "≤ 1.2",
        )

    held_1, held_100 = p50("get_my_work, 1 held run"), p50("get_my_work, 100 held runs")
    ratios = [
        grows("get_my_work"),
        grows("start_task"),
        grows("get_board_state"),
        ("get_my_work p50, 100 held / 1 held", ratio(held_100, held_1), "≤ 1.5"),
        ("get_my_work ms per extra held run", (held_100 - held_1) / 99, "—"),
    ]
    notes = (
        f"Seeded {SMALL} and {large} tasks (8/10 Done, 1/10 Todo, 1/10 Backlog) beside {beside} workspaces of"
        f" {beside_tasks} tasks each, in {seeded['seconds']:.0f} s (INSERT … SELECT generate_series, then"
        " VACUUM ANALYZE). Tasks only: no past runs, reports or events were seeded for them."
    )
    if timed_out:
        notes += (
            f" get_board_state timed out at {board_cap:.0f} s for: {', '.join(sorted(timed_out))} — its p50"
            " is a lower bound, and the calls after it shared the server with the one still running."
        )
    report(ctx, "scale", summaries, ratios, notes)
    ctx.results["scale"]["large"] = large
    ctx.results["scale"]["board_timed_out"] = sorted(timed_out)
