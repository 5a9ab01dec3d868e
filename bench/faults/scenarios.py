"""The fault scenarios: each runs agents on its own workspace and injects one kind of fault.

Every scenario is bounded: the agents stop after the scale's seconds, every wait below has a
deadline. What a scenario measures beyond the checker's invariants goes to `ctx.metrics`; a
promise it sees broken (a task not claimable in time, a stale write answered ok) goes to
`ctx.metrics["problems"]`, which the run counts as violations.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import time
from typing import Any

from bench.faults.agent import Agent
from bench.faults.proxy import Proxy
from bench.faults.run import Context, Scenario, probe_client, scenario_world
from tests.servers import pg_ctl

# What a caller may be answered while a fault lasts: the loop's own refusals and retriable errors.
EXPECTED = frozenset({"ok", "already_claimed", "lease_lost", "invalid_argument", "unavailable", "transport"})


def problem(ctx: Context, text: str) -> None:
    ctx.metrics.setdefault("problems", []).append(text)


def history(ctx: Context, agent: str) -> list[dict[str, Any]]:
    path = ctx.history(agent)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.endswith("}")]


def held(ctx: Context, agent: str) -> dict[str, Any] | None:
    """The agent's claim it has not finished or lost, by its own history (the last lines)."""
    calls = history(ctx, agent)
    starts = [c for c in calls if c["op"] == "start" and c["outcome"] == "ok"]
    if not starts:
        return None
    last = starts[-1]
    after = [c for c in calls if c.get("run") == last["run"] and c["op"] != "start"]
    if any(c["outcome"] != "ok" or c["op"] == "complete" for c in after):
        return None
    return last


async def mid_lease(ctx: Context, agent: str, limit: float = 5.0) -> dict[str, Any] | None:
    """Wait (bounded) until the agent holds a claim."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        claim = held(ctx, agent)
        if claim is not None:
            return claim
        await asyncio.sleep(0.02)
    return None


async def take_over(ctx: Context, probe: Agent, claim: dict[str, Any], since: float) -> float | None:
    """The probe claims the task as soon as it is free; seconds from `since`, None past the bound."""
    deadline = time.monotonic() + ctx.scale.lease + 15
    task = claim["task"]
    while time.monotonic() < deadline:
        answer = await probe.call("start", f"/api/v1/tasks/{task}/start", {}, task=task)
        if answer["_outcome"] == "ok":
            waited = time.monotonic() - since
            old = {"leaseToken": claim["token"], "note": "the old holder again"}
            stale = await probe.call(
                "heartbeat", f"/api/v1/runs/{claim['run']}/heartbeat", old, task=task, run=claim["run"]
            )
            if stale["_outcome"] != "lease_lost":
                problem(ctx, f"the old lease of task {task} was answered {stale['_outcome']}, not lease_lost")
            body = {"leaseToken": answer["leaseToken"], "outcome": "taken over by the probe"}
            await probe.retried(
                "complete", f"/api/v1/runs/{answer['runId']}/complete", body, task=task, run=answer["runId"]
            )
            return waited
        if answer["_outcome"] not in ("already_claimed", "unavailable", "transport"):
            return None  # the holder finished it first: nothing to take over
        await asyncio.sleep(0.1)
    problem(ctx, f"task {task} was not claimable within lease + 15 s")
    return None


def outcomes_between(ctx: Context, start: float, end: float) -> dict[str, int]:
    """The agents' answers to calls sent in [start, end] (wall clock)."""
    counts: dict[str, int] = {}
    for i in range(ctx.scale.agents):
        for call in history(ctx, f"a{i}"):
            if start <= call["sent"] <= end:
                counts[call["outcome"]] = counts.get(call["outcome"], 0) + 1
    return counts


def first_ok_after(ctx: Context, moment: float) -> float | None:
    """The wall time of the first call sent after `moment` that succeeded."""
    times = [
        c["recv"]
        for i in range(ctx.scale.agents)
        for c in history(ctx, f"a{i}")
        if c["sent"] >= moment and c["outcome"] == "ok"
    ]
    return min(times) if times else None


def claims_per_second(ctx: Context, start: float, end: float) -> float:
    n = sum(
        1
        for i in range(ctx.scale.agents)
        for c in history(ctx, f"a{i}")
        if c["op"] == "start" and c["outcome"] == "ok" and start <= c["recv"] <= end
    )
    return round(n / max(end - start, 0.001), 1)


def expect_only(ctx: Context, counts: dict[str, int], what: str) -> None:
    unexpected = {k: v for k, v in counts.items() if k not in EXPECTED}
    if unexpected:
        problem(ctx, f"{what}: answers outside the contract {unexpected}")


async def steady(ctx: Context) -> None:
    """No fault: the baseline the others are compared with."""
    async with scenario_world(ctx):
        await asyncio.sleep(ctx.scale.seconds)
        ctx.metrics.update(faults=0)


async def kill_agents(ctx: Context) -> None:
    """kill -9 of agents mid-lease: their tasks are claimable within lease + 1 s, their leases rejected."""
    async with scenario_world(ctx), probe_client(ctx) as client:
        probe = Agent(client, "probe", ctx.history("probe").open("a"), ctx.scale.lease)
        waits: list[float] = []
        for victim in range(ctx.scale.agents - 1):
            await asyncio.sleep(ctx.scale.seconds / (ctx.scale.agents + 1))
            claim = await mid_lease(ctx, f"a{victim}")
            ctx.agents[victim].kill()
            killed = time.monotonic()
            claim = held(ctx, f"a{victim}") or claim
            if claim is not None:
                waited = await take_over(ctx, probe, claim, killed)
                if waited is not None:
                    waits.append(round(waited, 2))
        ctx.metrics.update(
            faults=ctx.scale.agents - 1, takeover_seconds=waits, recovery_seconds=max(waits, default=None)
        )
        if any(w > ctx.scale.lease + 1 for w in waits):
            problem(
                ctx,
                f"a killed agent's task took {max(waits)} s to be free (lease {ctx.scale.lease} s + 1 s)",
            )


async def sigstop(ctx: Context) -> None:
    """SIGSTOP an agent past its lease, another claims, SIGCONT: the old holder is refused every write."""
    async with scenario_world(ctx), probe_client(ctx) as client:
        probe = Agent(client, "probe", ctx.history("probe").open("a"), ctx.scale.lease)
        woken, waits = [], []
        for victim in range(ctx.scale.agents):
            await asyncio.sleep(ctx.scale.seconds / (ctx.scale.agents + 3))
            claim = await mid_lease(ctx, f"a{victim}")
            if claim is None:
                continue
            ctx.agents[victim].send_signal(signal.SIGSTOP)
            stopped = time.monotonic()
            claim = held(ctx, f"a{victim}") or claim
            waited = await take_over(ctx, probe, claim, stopped)
            ctx.agents[victim].send_signal(signal.SIGCONT)
            if waited is not None:
                woken.append((f"a{victim}", claim["run"], time.time()))
                waits.append(round(waited, 2))
        await asyncio.sleep(1)
        ctx.metrics.update(
            faults=len(woken), takeover_seconds=waits, recovery_seconds=max(waits, default=None)
        )
        for agent, run, resumed in woken:
            late = [
                c
                for c in history(ctx, agent)
                if c.get("run") == run and c["op"] != "start" and c["sent"] >= resumed
            ]
            if any(c["outcome"] == "ok" for c in late):
                problem(ctx, f"{agent} woke up and wrote to run {run} after its task was taken over")
        ctx.metrics["woken_writes_refused"] = sum(
            1
            for agent, run, resumed in woken
            for c in history(ctx, agent)
            if c.get("run") == run and c["sent"] >= resumed and c["outcome"] == "lease_lost"
        )


async def pg_restart(ctx: Context) -> None:
    """pg_ctl restart -m immediate under load: only retriable errors, back within 10 s, Weft untouched."""
    async with scenario_world(ctx):
        recoveries: list[float | None] = []
        answers: dict[str, int] = {}
        for _ in range(ctx.scale.rounds):
            await asyncio.sleep(ctx.scale.seconds / (ctx.scale.rounds + 2))
            began = time.time()
            log = os.path.join(os.path.dirname(ctx.pgdata), "log")
            await asyncio.to_thread(
                subprocess.run,
                pg_ctl(ctx.pgdata, "restart", "-m", "immediate", "-w", "-t", "60", "-l", log),
                check=True,
                stdout=subprocess.DEVNULL,
                timeout=90,
            )
            ready = time.time()
            await asyncio.sleep(min(10, ctx.scale.seconds / (ctx.scale.rounds + 2)))
            back = first_ok_after(ctx, ready)
            recoveries.append(round(back - ready, 2) if back else None)
            for outcome, n in outcomes_between(ctx, began - 1, ready + 10).items():
                answers[outcome] = answers.get(outcome, 0) + n
        known = [r for r in recoveries if r is not None]
        ctx.metrics.update(
            faults=len(recoveries),
            recoveries=recoveries,
            answers_during=answers,
            recovery_seconds=max(known) if len(known) == len(recoveries) else None,
        )
        expect_only(ctx, answers, "during the restarts")
        if len(known) < len(recoveries) or max(known, default=0) > 10:
            problem(ctx, f"no successful call within 10 s of PostgreSQL taking connections ({recoveries})")


async def _redis_fault(ctx: Context, sig: signal.Signals) -> None:
    async with scenario_world(ctx):
        third = ctx.scale.seconds / 3
        await asyncio.sleep(third)
        began = time.time()
        os.kill(ctx.redis_pid, sig)
        await asyncio.sleep(third)
        ended = time.time()
        if sig == signal.SIGSTOP:
            os.kill(ctx.redis_pid, signal.SIGCONT)
        before = claims_per_second(ctx, began - third + 2, began)
        during = claims_per_second(ctx, began, ended)
        ctx.metrics.update(
            faults=1,
            claims_per_second_before=before,
            claims_per_second_during=during,
            recovery_seconds=0.0,
            answers_during=outcomes_between(ctx, began, ended),
        )
        expect_only(ctx, ctx.metrics["answers_during"], "with Redis down")
        if before <= 0 or during < before / 2:
            problem(ctx, f"claims slowed from {before}/s to {during}/s with Redis {sig.name}")


async def redis_kill(ctx: Context) -> None:
    """Redis killed (SIGKILL): claims keep working."""
    await _redis_fault(ctx, signal.SIGKILL)


async def redis_freeze(ctx: Context) -> None:
    """Redis frozen (SIGSTOP: its socket accepts, nothing answers): claims keep working."""
    await _redis_fault(ctx, signal.SIGSTOP)


async def pg_network(ctx: Context) -> None:
    """A TCP proxy between Weft and PostgreSQL delays, resets and drops connections."""
    pg_port = ctx.pg_url.rsplit(":", 1)[1].split("/")[0]
    proxy = Proxy(int(pg_port))
    url = ctx.pg_url.replace(f":{pg_port}/", f":{await proxy.start()}/")
    phases = [("delay", 0.05), ("pass", 0.0), ("reset", 0.0), ("pass", 0.0), ("blackhole", 0.0)]
    step = min(4.0, ctx.scale.seconds / (len(phases) + 3) / ctx.scale.rounds)
    recoveries: list[float | None] = []
    answers: dict[str, int] = {}
    try:
        async with scenario_world(ctx, database_url=url):
            for _ in range(ctx.scale.rounds):
                await asyncio.sleep(step)
                began = time.time()
                for mode, delay in phases:
                    proxy.set(mode, delay)
                    await asyncio.sleep(step)
                healed = time.time()
                proxy.set("reset")  # the partition ends as partitions do: the stuck connections die
                proxy.set("pass")
                await asyncio.sleep(2 * step)
                back = first_ok_after(ctx, healed)
                recoveries.append(round(back - healed, 2) if back else None)
                for outcome, n in outcomes_between(ctx, began, healed).items():
                    answers[outcome] = answers.get(outcome, 0) + n
    finally:
        await proxy.stop()
    known = [r for r in recoveries if r is not None]
    ctx.metrics.update(
        faults=3 * len(recoveries),
        recoveries=recoveries,
        answers_during=answers,
        recovery_seconds=max(known) if len(known) == len(recoveries) else None,
    )
    expect_only(ctx, answers, "through the faulty network")
    if len(known) < len(recoveries) or max(known, default=0) > 10:
        problem(ctx, f"no successful call within 10 s of the network healing ({recoveries})")


def _workers(master: int) -> list[tuple[int, int]]:
    """The gunicorn master's workers as (pid, seconds alive)."""
    found = subprocess.run(["pgrep", "-P", str(master)], capture_output=True, text=True, check=False)
    pids = [int(pid) for pid in found.stdout.split()]
    ages = subprocess.run(
        ["ps", "-o", "etimes=", "-p", ",".join(map(str, pids))], capture_output=True, text=True, check=False
    )
    return list(zip(pids, (int(age) for age in ages.stdout.split()), strict=False)) if pids else []


async def _booted(master: int, workers: int, limit: float) -> list[tuple[int, int]]:
    """Wait (bounded) until every worker has been up 10 s: a replacement that is still loading
    Weft serves nothing, and killing the other worker then would be an outage, not this fault."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        alive = _workers(master)
        if len(alive) == workers and min(age for _, age in alive) >= 10:
            return alive
        await asyncio.sleep(0.5)
    return _workers(master)


async def worker_kill(ctx: Context) -> None:
    """kill -9 of a uvicorn worker under gunicorn (2 workers): in-flight calls fail retriably."""
    async with scenario_world(ctx, workers=2):
        assert ctx.server is not None
        began, killed = time.time(), []
        for _ in range(ctx.scale.rounds):
            await asyncio.sleep(ctx.scale.seconds / (ctx.scale.rounds + 2))
            alive = await _booted(ctx.server.pid, 2, ctx.scale.seconds / (ctx.scale.rounds + 2))
            if alive:
                os.kill(max(alive, key=lambda worker: worker[1])[0], signal.SIGKILL)
                killed.append(time.time())
        await asyncio.sleep(2)
        backs = [first_ok_after(ctx, moment) for moment in killed]
        recoveries = [
            round(back - moment, 2) if back else None for back, moment in zip(backs, killed, strict=True)
        ]
        known = [r for r in recoveries if r is not None]
        ctx.metrics.update(
            faults=len(killed),
            recoveries=recoveries,
            answers_during=outcomes_between(ctx, began, time.time()),
            recovery_seconds=max(known) if len(known) == len(recoveries) else None,
        )
        expect_only(ctx, ctx.metrics["answers_during"], "with a worker killed")


SCENARIOS: dict[str, Scenario] = {
    "steady": steady,
    "kill_agents": kill_agents,
    "sigstop": sigstop,
    "pg_restart": pg_restart,
    "redis_kill": redis_kill,
    "redis_freeze": redis_freeze,
    "pg_network": pg_network,
    "worker_kill": worker_kill,
}
