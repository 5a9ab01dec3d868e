"""Webhook scenarios: receivers that are down, slow (30 s) or answer 410, and Redis frozen while a
subscription is live. Writes must not notice; a 410 disables its subscription; failed deliveries
are retried on the schedule (hooks/rules.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import AsyncIterator
from typing import Any

import psycopg

from bench.faults.run import Context, probe_client, scenario_world
from bench.faults.scenarios import claims_per_second, expect_only, outcomes_between, problem
from hooks.rules import RETRY_DELAYS
from tests.servers import free_port

SLOW_SECONDS = 30.0
MODES = ("ok", "slow", "gone")


async def _answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """A minimal HTTP receiver: /ok answers 200, /slow after 30 s, /gone 410."""
    try:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        length = next(
            (
                int(line.split(b":")[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length")
            ),
            0,
        )
        await asyncio.wait_for(reader.readexactly(length), 10)
        path = head.split(b" ")[1].decode()
        if path == "/slow":
            await asyncio.sleep(SLOW_SECONDS)
        status = "410 Gone" if path == "/gone" else "200 OK"
        writer.write(f"HTTP/1.1 {status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".encode())
        await writer.drain()
    except (TimeoutError, OSError, asyncio.IncompleteReadError, IndexError, ValueError):
        pass
    finally:
        writer.close()


@contextlib.asynccontextmanager
async def receiver() -> AsyncIterator[int]:
    server = await asyncio.start_server(_answer, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(server.wait_closed(), 2)


async def _subscribe(ctx: Context, urls: list[str]) -> list[int]:
    ids = []
    async with probe_client(ctx) as client:
        for url in urls:
            answer = await client.post(
                "/api/v1/subscriptions", json={"url": url, "eventTypes": ["run.completed"]}
            )
            if answer.status_code >= 300:
                problem(ctx, f"subscribing {url} was refused: {answer.text[:300]}")
                continue
            ids.append(int(answer.json()["subscription"]["id"]))
    return ids


def _off_schedule(ctx: Context, subscriptions: list[int]) -> int:
    """Failed deliveries whose next attempt is not the schedule's delay after the failed one."""
    delays = {n + 1: delay.total_seconds() for n, delay in enumerate(RETRY_DELAYS)}
    with psycopg.connect(ctx.pg_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT failures, extract(epoch FROM next_attempt_at - last_attempt_at) FROM hooks_delivery "
            "WHERE subscription_id = ANY(%s) AND state = 'pending' AND failures > 0",
            [subscriptions],
        ).fetchall()
    return sum(1 for failures, waited in rows if abs(float(waited) - delays.get(failures, -1)) > 0.01)


def _deliveries(ctx: Context, subscriptions: list[int]) -> dict[str, Any]:
    with psycopg.connect(ctx.pg_url, autocommit=True) as conn:
        states = conn.execute(
            "SELECT id, state FROM hooks_subscription WHERE id = ANY(%s) ORDER BY id", [subscriptions]
        ).fetchall()
        rows = conn.execute(
            "SELECT subscription_id, state, count(*), sum(attempts), max(failures) FROM hooks_delivery "
            "WHERE subscription_id = ANY(%s) GROUP BY 1, 2 ORDER BY 1, 2",
            [subscriptions],
        ).fetchall()
    return {
        "subscriptions": {str(pk): state for pk, state in states},
        "deliveries": [list(map(str, row)) for row in rows],
    }


async def webhooks(ctx: Context) -> None:
    """Receivers down (nothing listens), slow (30 s) and answering 410, beside one that works."""
    async with receiver() as port:
        down = f"http://127.0.0.1:{free_port()}/down"
        urls = [f"http://127.0.0.1:{port}/{mode}" for mode in MODES] + [down]
        async with scenario_world(ctx):
            subscriptions = await _subscribe(ctx, urls)
            began = time.time()
            await asyncio.sleep(ctx.scale.seconds)
            ended = time.time()
            state = _deliveries(ctx, subscriptions)
            ctx.metrics.update(
                faults=3,
                claims_per_second=claims_per_second(ctx, began, ended),
                answers_during=outcomes_between(ctx, began, ended),
                recovery_seconds=0.0,
                **state,
            )
            expect_only(ctx, ctx.metrics["answers_during"], "with failing receivers")
            by_url = dict(zip(urls, subscriptions, strict=False))
            gone = state["subscriptions"].get(str(by_url.get(urls[2])))
            if gone == "active":
                problem(ctx, "the subscription whose receiver answered 410 is still active")
            if off := _off_schedule(ctx, subscriptions):
                problem(ctx, f"{off} failed deliveries are due again off the retry schedule")


async def redis_freeze_webhooks(ctx: Context) -> None:
    """Redis frozen while a subscription is live: deliveries are queued to Celery through Redis."""
    async with receiver() as port, scenario_world(ctx):
        await _subscribe(ctx, [f"http://127.0.0.1:{port}/ok"])
        third = ctx.scale.seconds / 3
        await asyncio.sleep(third)
        began = time.time()
        os.kill(ctx.redis_pid, signal.SIGSTOP)
        try:
            await asyncio.sleep(third)
        finally:
            os.kill(ctx.redis_pid, signal.SIGCONT)
        ended = time.time()
        before = claims_per_second(ctx, began - third + 2, began)
        during = claims_per_second(ctx, began, ended)
        ctx.metrics.update(
            faults=1,
            claims_per_second_before=before,
            claims_per_second_during=during,
            recovery_seconds=0.0,
            answers_during=outcomes_between(ctx, began, ended),
        )
        expect_only(ctx, ctx.metrics["answers_during"], "with Redis frozen and a subscription live")
        if during < before / 2:
            problem(
                ctx,
                f"claims slowed from {before}/s to {during}/s with Redis frozen and a subscription live",
            )


HOOK_SCENARIOS = {"webhooks": webhooks, "redis_freeze_webhooks": redis_freeze_webhooks}
