"""What every suite shares: the run's context, interleaved rounds, the meters and the report.

A suite names its series, `interleave` runs them round after round in rotating order, and
`Meter` records around each series what it cost per operation: the server's CPU, PostgreSQL's
CPU, and the statements and SQL time pg_stat_statements saw. Each suite prints one table and
writes artifacts/bench/<suite>.json.
"""

from __future__ import annotations

import json
import math
import os
import platform
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from asgiref.sync import sync_to_async

from bench import infra
from bench.stats import Sample, Summary, fmt, rotations, summarise

Series = Callable[[], Awaitable[Sample]]


@dataclass
class Context:
    cluster: infra.Cluster
    redis_url: str
    port: int
    quick: bool
    profile: bool = False
    base: str = ""
    results: dict[str, Any] = field(default_factory=dict)

    @property
    def resource(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/mcp"

    @property
    def rounds(self) -> int:
        return 3 if self.quick else 5


@dataclass
class Meter:
    """Per-operation costs of one series: server and database CPU, statements, SQL time."""

    ctx: Context
    server_pid: int | None
    started: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def __enter__(self) -> Meter:
        infra.sql_reset(self.ctx.cluster)
        server = infra.cpu_seconds(self.server_pid) if self.server_pid else 0.0
        self.started = (server, infra.cluster_cpu(self.ctx.cluster), time.process_time())
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def per_op(self, completed: int) -> dict[str, float]:
        server = infra.cpu_seconds(self.server_pid) if self.server_pid else 0.0
        database = infra.cluster_cpu(self.ctx.cluster)
        client = time.process_time()
        statements, sql_ms = infra.sql_totals(self.ctx.cluster)
        n = max(completed, 1)
        return {
            "server_cpu_ms": (server - self.started[0]) * 1000 / n if self.server_pid else math.nan,
            "db_cpu_ms": (database - self.started[1]) * 1000 / n,
            "client_cpu_ms": (client - self.started[2]) * 1000 / n,
            "statements": statements / n,
            "sql_ms": sql_ms / n,
            # The machine is shared: the 1-minute load average when the series ended says how busy.
            "load1": os.getloadavg()[0],
        }


async def interleave(
    ctx: Context,
    series: dict[str, tuple[Series, int | None]],
    *,
    rounds: int | None = None,
    settle: Callable[[], dict[str, float]] | None = None,
) -> dict[str, Summary]:
    """Run each series once per round, in rotating order; each figure is the median of the rounds.

    `series` maps a name to (run it once, the pid of the server it loads — None for peers that
    report their own rate). A series that raises is recorded as an error, never dropped silently.
    `settle`, when given, runs before every series (all alike) and its figures are kept with the
    series' own: a suite whose series churn rows starts each from the same state of its tables.
    """
    samples: dict[str, list[Sample]] = {name: [] for name in series}
    extras: dict[str, dict[str, list[float]]] = {name: {} for name in series}
    plan = rotations(list(series), rounds or ctx.rounds)
    for number, order in enumerate(plan, 1):
        for name in order:
            run, pid = series[name]
            settled = await sync_to_async(settle)() if settle else {}
            infra.wait_quiet()
            with Meter(ctx, pid) as meter:
                try:
                    sample = await run()
                except Exception as exc:
                    print(f"  {name}: failed: {exc!r}"[:400], flush=True)
                    sample = Sample(errors=1)
                costs = meter.per_op(sample.completed)
                if number == len(plan):
                    ctx.results.setdefault("top_sql", {})[name] = infra.sql_top(ctx.cluster)
            samples[name].append(sample)
            for key, value in {**settled, **costs, **getattr(sample, "extra", {})}.items():
                extras[name].setdefault(key, []).append(value)
            print(
                f"  {name:<28} p50 {fmt(sample.p50_ms):>8} ms  p99 {fmt(sample.p99_ms):>8} ms"
                f"  {fmt(sample.rate, 1):>8}/s  errors {sample.errors}",
                flush=True,
            )
    if ctx.profile:
        await profiled(ctx, series)
    return {name: summarise(name, samples[name], extras[name]) for name in series}


def machine() -> dict[str, Any]:
    load = os.getloadavg()
    return {
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "loadavg_at_end": [round(v, 2) for v in load],
    }


def report(
    ctx: Context, suite: str, summaries: dict[str, Summary], ratios: list[tuple[str, float, str]], notes: str
) -> None:
    """Print the suite's table and its ratios; write artifacts/bench/<suite>.json."""
    from bench.render import suite_markdown

    infra.ARTIFACTS.mkdir(parents=True, exist_ok=True)
    payload = {
        "suite": suite,
        "quick": ctx.quick,
        "rounds": ctx.rounds,
        "machine": machine(),
        "series": {name: s.as_json() for name, s in summaries.items()},
        "ratios": {name: (None if math.isnan(v) else round(v, 4)) for name, v, _ in ratios},
        "targets": {name: target for name, _, target in ratios},
        "notes": notes,
    }
    print("\n" + suite_markdown(payload), flush=True)
    ctx.results[suite] = payload
    (infra.ARTIFACTS / f"{suite}.json").write_text(json.dumps(payload, indent=2) + "\n")


LAYERS = (
    ("django/db/", "Django ORM"),
    ("psycopg", "psycopg"),
    ("django/", "Django (other)"),
    ("oauth2_provider/", "Django (other)"),
    ("mcp/", "MCP SDK"),
    ("pydantic", "pydantic"),
    ("starlette/", "Starlette"),
    ("uvicorn/", "uvicorn"),
    ("h11/", "uvicorn"),
    ("httptools/", "uvicorn"),
    ("asgiref/", "asgiref (sync_to_async)"),
    ("channels", "Channels"),
    ("redis/", "redis client"),
    ("asyncio/", "asyncio"),
    ("threading.py", "threads"),
    ("concurrent/", "threads"),
    ("json/", "json"),
    ("logging/", "logging"),
    *(
        (f"{package}/", "Weft's own code")
        for package in ("boards", "accounts", "weft", "api", "issues", "hooks")
    ),
)


# py-spy samples threads that are not idle by its heuristics, which counts some waits: these name them.
WAITS = (
    ("EpollSelector.select", "idle"),
    ("_execute_send (psycopg", "waiting on PostgreSQL"),
    ("Connection.wait (psycopg", "waiting on PostgreSQL"),
    ("_worker (concurrent", "thread hand-off (sync_to_async)"),
    ("ThreadPoolExecutor.submit", "thread hand-off (sync_to_async)"),
    ("_write_to_self (asyncio", "thread hand-off (sync_to_async)"),
)


def _bucket(frame: str) -> str:
    """Which layer a py-spy frame (`function (path/file.py:line)`) is in: a named wait, else by file."""
    for needle, name in WAITS:
        if needle in frame:
            return name
    path = frame.rpartition(" (")[2]
    for prefix, name in LAYERS:
        if path.startswith(prefix):
            return name
    return "other"


def profile_summary(raw: str) -> dict[str, float]:
    """Share of the server's busy samples per layer of the leaf frame (self time; the event loop's
    idle wait left out, the waits py-spy counts named), and the share in sync_to_async's threads."""
    counts: dict[str, int] = {}
    in_thread = 0
    for line in raw.splitlines():
        stack, _, n = line.rpartition(" ")
        if not stack or not n.isdigit():
            continue
        layer = _bucket(stack.split(";")[-1])
        if layer == "idle":
            continue
        counts[layer] = counts.get(layer, 0) + int(n)
        in_thread += int(n) if "SyncToAsync.thread_handler" in stack else 0
    total = sum(counts.values()) or 1
    shares = {k: round(v / total, 3) for k, v in sorted(counts.items(), key=lambda kv: -kv[1])}
    return {**shares, "(inclusive) in sync_to_async threads": round(in_thread / total, 3), "samples": total}


async def profiled(ctx: Context, series: dict[str, tuple[Series, int | None]]) -> None:
    """One more, untimed pass of each server series under py-spy (--profile): where the CPU goes."""
    import signal
    import subprocess

    spy = infra.py_spy()
    if spy is None:
        print("  py-spy is not in .venv-bench: no profile")
        return
    profiles = ctx.results.setdefault("profiles", {})
    for name, (run, pid) in series.items():
        if pid is None:
            continue
        out = infra.ARTIFACTS / f"profile-{''.join(c if c.isalnum() else '-' for c in name)}.txt"
        infra.ARTIFACTS.mkdir(parents=True, exist_ok=True)
        proc = subprocess.Popen(
            [str(spy), "record", "--pid", str(pid), "--rate", "250", "--format", "raw", "--nonblocking",
             "--output", str(out)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        time.sleep(1.0)
        try:
            await run()
        finally:
            proc.send_signal(signal.SIGINT)
            proc.wait(30)
        if out.exists():
            profiles[name] = summary = profile_summary(out.read_text())
            top = ", ".join(f"{k} {v:.0%}" for k, v in list(summary.items())[:7] if k != "samples")
            print(f"  profile {name}: {top}", flush=True)
