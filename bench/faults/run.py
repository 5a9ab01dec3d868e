"""The fault run: Weft on a throwaway PostgreSQL and Redis, agents as OS processes, one fault per scenario.

`python -m bench.faults.run --quick` (make faults-quick) runs every scenario once at small scale;
without --quick (make faults) each runs longer with more agents. Each scenario gets its own
workspace, Weft server and Redis; at its end the event log and the runs are dumped and the
history checker (check.py) reads them with the agents' histories. Results go to
artifacts/faults/ as JSON; the exit status is 1 when any scenario has a violation.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg

from bench.faults import check
from tests.servers import _wait_for_port, free_port, postgres_cluster, redis_server

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts" / "faults"
PYTHON = sys.executable


@dataclass
class Scale:
    agents: int
    seconds: float
    tasks_per_agent: int
    lease: float
    rounds: int


QUICK = Scale(agents=4, seconds=10, tasks_per_agent=400, lease=2.0, rounds=1)
FULL = Scale(agents=6, seconds=240, tasks_per_agent=1500, lease=2.0, rounds=4)


@dataclass
class Context:
    """One scenario's world: its directory, workspace, server and agents."""

    name: str
    scale: Scale
    pg_url: str
    pgdata: str
    redis_url: str
    redis_pid: int
    run_dir: Path
    seed: dict[str, Any] = field(default_factory=dict)
    base: str = ""
    server: subprocess.Popen[bytes] | None = None
    agents: list[asyncio.subprocess.Process] = field(default_factory=list)
    started: float = 0.0
    metrics: dict[str, Any] = field(default_factory=dict)

    def history(self, name: str) -> Path:
        return self.run_dir / "history" / f"{name}.jsonl"

    def env(self, database_url: str | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "WEFT_TEST"))}
        env.update(
            DATABASE_URL=database_url or self.pg_url,
            REDIS_URL=self.redis_url,
            WEFT_DEBUG="1",
            WEFT_LEASE_SECONDS=str(int(self.scale.lease)),
            WEFT_PAT_RATE_PER_MINUTE="1000000",
            WEFT_EMBEDDED_TIMER="1",
            DATABASE_POOL_MIN="2",
            DJANGO_SETTINGS_MODULE="weft.settings",
            LOG_LEVEL="ERROR",
        )
        env.pop("WEFT_TESTING", None)
        return env


def manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([PYTHON, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"{args} failed: {done.stderr[-2000:]}")
    return done.stdout


def start_server(ctx: Context, *, workers: int = 0, database_url: str | None = None) -> None:
    """uvicorn (workers=0) or gunicorn with `workers` uvicorn workers, as production serves."""
    port = free_port()
    env = ctx.env(database_url)
    env["WEFT_BASE_URL"] = f"http://127.0.0.1:{port}"
    if workers:
        cmd = [
            PYTHON,
            "-m",
            "gunicorn",
            "weft.asgi:application",
            "-k",
            "uvicorn_worker.UvicornWorker",
            "-w",
            str(workers),
            "-b",
            f"127.0.0.1:{port}",
            "--log-level",
            "warning",
            "--graceful-timeout",
            "5",
        ]
    else:
        cmd = [
            PYTHON,
            "-m",
            "uvicorn",
            "weft.asgi:application",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--lifespan",
            "on",
            "--log-level",
            "warning",
        ]
    log = (ctx.run_dir / "server.log").open("ab")
    ctx.server = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=log)
    _wait_for_port(port, 60, "Weft")
    ctx.base = f"http://127.0.0.1:{port}"
    _wait_for_answers(ctx.base, workers)


def _wait_for_answers(base: str, workers: int) -> None:
    """Until Weft answers: gunicorn listens before its workers have loaded it."""
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError):
            httpx.get(f"{base}/api/v1/work", timeout=10)
            break
        time.sleep(0.2)
    if workers:
        time.sleep(3)  # the other workers load meanwhile; one answering does not wait for them


def stop_server(ctx: Context) -> None:
    if ctx.server is None:
        return
    ctx.server.terminate()
    try:
        ctx.server.wait(15)
    except subprocess.TimeoutExpired:
        ctx.server.kill()
        ctx.server.wait(5)


async def start_agents(ctx: Context, *, seconds: float) -> None:
    tasks, n, per = ctx.seed["tasks"], ctx.scale.agents, ctx.scale.tasks_per_agent
    for i, token in enumerate(ctx.seed["tokens"]):
        mine = tasks[i * per : (i + 1) * per]
        theirs = tasks[((i + 1) % n) * per : ((i + 1) % n + 1) * per]
        proc = await asyncio.create_subprocess_exec(
            PYTHON,
            "-m",
            "bench.faults.agent",
            ctx.base,
            token,
            f"a{i}",
            str(ctx.history(f"a{i}")),
            "--tasks",
            f"{mine[0]}-{mine[-1]}",
            "--share",
            f"{theirs[0]}-{theirs[-1]}",
            "--seconds",
            str(seconds),
            "--lease",
            str(ctx.scale.lease),
            cwd=ROOT,
        )
        ctx.agents.append(proc)
    # Faults are timed from when the agents work, not from when their processes were spawned
    # (loading Python on a busy machine takes seconds).
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not all(
        ctx.history(f"a{i}").exists() and ctx.history(f"a{i}").stat().st_size for i in range(n)
    ):
        await asyncio.sleep(0.1)
    ctx.started = time.monotonic()


async def wait_agents(ctx: Context, timeout: float) -> None:
    for proc in ctx.agents:
        try:
            await asyncio.wait_for(proc.wait(), timeout)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGCONT)
                proc.kill()
            await proc.wait()


def probe_client(ctx: Context) -> httpx.AsyncClient:
    headers = {"authorization": f"Bearer {ctx.seed['probe']}"}
    return httpx.AsyncClient(base_url=ctx.base, headers=headers, timeout=15)


@contextlib.asynccontextmanager
async def scenario_world(
    ctx: Context, *, workers: int = 0, database_url: str | None = None
) -> AsyncIterator[Context]:
    seed = manage(
        ctx.env(),
        "-m",
        "bench.faults.db",
        "seed",
        ctx.name.replace("_", "-"),
        str(ctx.scale.agents),
        str(ctx.scale.agents * ctx.scale.tasks_per_agent),
    )
    ctx.seed = json.loads(seed.strip().splitlines()[-1])
    start_server(ctx, workers=workers, database_url=database_url)
    try:
        await start_agents(ctx, seconds=ctx.scale.seconds)
        yield ctx
        await wait_agents(ctx, ctx.scale.seconds + 60)
    finally:
        for proc in ctx.agents:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
        stop_server(ctx)


def verdict(ctx: Context, elapsed: float) -> dict[str, Any]:
    manage(ctx.env(), "-m", "bench.faults.db", "dump", str(ctx.seed["workspace"]), str(ctx.run_dir))
    events, runs, history = check.load(ctx.run_dir)
    violations = check.check(events, runs, history)
    violations += [check.Violation("scenario", problem) for problem in ctx.metrics.pop("problems", [])]
    result = {
        "scenario": ctx.name,
        "seconds": round(elapsed, 1),
        "agents": ctx.scale.agents,
        "lease_seconds": ctx.scale.lease,
        **check.summary(events, runs, history),
        **ctx.metrics,
        "violations": len(violations),
        "first_violation": violations[0].render() if violations else None,
    }
    return result


Scenario = Callable[[Context], Awaitable[None]]


async def run_scenario(
    name: str, fn: Scenario, scale: Scale, pg: tuple[str, str], out: Path
) -> dict[str, Any]:
    run_dir = out / name
    shutil.rmtree(run_dir, ignore_errors=True)
    (run_dir / "history").mkdir(parents=True)
    info: dict[str, str] = {}
    started = time.monotonic()
    with redis_server(info) as redis_url:
        ctx = Context(name, scale, pg[0], pg[1], redis_url, int(info["WEFT_TEST_REDIS_PID"]), run_dir)
        with contextlib.suppress(ProcessLookupError):
            await fn(ctx)
        os.kill(ctx.redis_pid, signal.SIGCONT) if _alive(ctx.redis_pid) else None
    result = verdict(ctx, time.monotonic() - started)
    (out / f"{name}.json").write_text(json.dumps(result, indent=2) + "\n")
    return result


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _durable(url: str) -> None:
    """The throwaway cluster runs with synchronous_commit off (its command line, which ALTER SYSTEM
    cannot override), so a crash loses the last commits, as PostgreSQL documents. A crash test
    needs commits durable: the database's own setting applies to every session."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ALTER DATABASE weft SET synchronous_commit = on")
    with psycopg.connect(url, autocommit=True) as conn:
        (value,) = conn.execute("SHOW synchronous_commit").fetchone() or ("?",)
    if value != "on":
        raise RuntimeError(f"synchronous_commit is {value}: a restart could lose acknowledged commits")


async def main(args: argparse.Namespace) -> int:
    from bench.faults.hooks import HOOK_SCENARIOS
    from bench.faults.scenarios import SCENARIOS

    scenarios = {**SCENARIOS, **HOOK_SCENARIOS}
    scale = QUICK if args.quick else FULL
    names = args.only.split(",") if args.only else list(scenarios)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = []
    info: dict[str, str] = {}
    with postgres_cluster(info) as pg_url:
        _durable(pg_url)
        env = {**os.environ, "DATABASE_URL": pg_url, "WEFT_DEBUG": "1"}
        manage(env, "manage.py", "migrate", "--noinput")
        for name in names:
            result = await run_scenario(name, scenarios[name], scale, (pg_url, info["WEFT_TEST_PGDATA"]), out)
            results.append(result)
            print(_line(result), flush=True)
    summary = {
        "machine": _machine(),
        "scale": scale.__dict__,
        "scenarios": results,
        "claims": sum(r["claims"] for r in results),
        "violations": sum(r["violations"] for r in results),
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(f"{summary['claims']} claims, {summary['violations']} violations; results in {out}")
    for result in results:
        if result["first_violation"]:
            print(f"{result['scenario']}:\n{result['first_violation']}")
    return 1 if summary["violations"] else 0


def _line(r: dict[str, Any]) -> str:
    return (
        f"{r['scenario']:<16} {r['seconds']:>6}s claims {r['claims']:>5} completions {r['completions']:>5} "
        f"calls {r['calls']:>6} faults {r.get('faults', 0):>3} recovery {r.get('recovery_seconds', '-')} "
        f"violations {r['violations']}"
    )


def _machine() -> dict[str, Any]:
    return {"cpus": os.cpu_count(), "system": platform.platform(), "python": platform.python_version()}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", default="")
    parser.add_argument("--out", default=str(ARTIFACTS))
    sys.exit(asyncio.run(main(parser.parse_args())))
