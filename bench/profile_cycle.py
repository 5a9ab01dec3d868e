"""A long profile of one cycle series: where the server's time goes, with whole stacks.

    python -m bench.profile_cycle [--start-next] [--cycles N] [--blocking] [--out FILE]
    python -m bench.profile_cycle --rate [--start-next] [--cycles N]

`make bench --profile` samples each series briefly and without stopping the server (partial
stacks). This runs one series — the plain cycle or startNext, 16 agents, as bench/suite_cycle.py
drives them — for N cycles under py-spy (`--blocking` pauses the server at each sample for whole
stacks; the rate then drops, the shape stays), then prints the server's busiest frames, leaf and
inclusive, and the statements pg_stat_statements saw (with their planning, to tell a generic plan
from one planned on every call). Nothing is timed for a table: it says where to look.

`--rate` runs the series without py-spy and prints its rate with what each side spent a cycle,
from the kernel's scheduler counters (`/proc/<pid>/schedstat`): the server's CPU, the share of
the series it spent waiting for a core, the cluster's processes' CPU; and the load driver's
(this process's) CPU. Run from two checkouts in
turn (`cd DIR && PYTHONPATH=DIR .venv/bin/python -m bench.profile_cycle --rate …`), A B A B, it
compares two versions of the code on the same machine minutes apart.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import subprocess
import sys
import time
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import psycopg
from asgiref.sync import sync_to_async

from bench import infra
from bench.driver import drive
from bench.run import services

IDLE = ("select (selectors", "_run_once", "epoll")
STATEMENTS = """
SELECT calls, plans, round((total_plan_time / greatest(calls, 1))::numeric, 3),
       round((total_exec_time / greatest(calls, 1))::numeric, 3),
       left(regexp_replace(query, '\\s+', ' ', 'g'), 120)
FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 12
"""


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--start-next", action="store_true", help="complete_task with startNext")
    parser.add_argument("--cycles", type=int, default=3000)
    parser.add_argument("--blocking", action="store_true", help="whole stacks (py-spy stops the server)")
    parser.add_argument("--out", type=Path, default=infra.ARTIFACTS / "profile-cycle.txt")
    parser.add_argument("--rate", action="store_true", help="no profile: the rate, each side's CPU a cycle")
    args = parser.parse_args(argv)
    spy = None if args.rate else infra.py_spy()
    if spy is None and not args.rate:
        print("py-spy is not in .venv-bench (make .venv-bench/.installed)", file=sys.stderr)
        return 1
    from tests.servers import free_port

    with ExitStack() as stack:
        cluster, redis_url = services(stack)
        asyncio.run(_profile(args, spy, cluster, redis_url, free_port()))
    if spy is not None:
        _print_frames(args.out.read_text())
    return 0


async def _profile(
    args: argparse.Namespace, spy: Path | None, cluster: infra.Cluster, redis_url: str, port: int
) -> None:
    from bench import seed
    from bench.suite_cycle import AGENTS, Agents

    resource = f"http://127.0.0.1:{port}/api/mcp"
    place = await sync_to_async(seed.place)("Profile")
    agents = [await sync_to_async(seed.agent)(place, resource, f"agent-{i}") for i in range(AGENTS)]
    ids = await sync_to_async(seed.tasks)(place, args.cycles + 20 * AGENTS, column="todo")
    with infra.weft_server(cluster.url, redis_url, port) as weft:
        team = Agents(weft.base, [a.token for a in agents], [ids[i::AGENTS] for i in range(AGENTS)])
        op = team.cycle_next if args.start_next else team.cycle
        await drive(op, concurrency=AGENTS, count=10 * AGENTS, warmup=AGENTS)
        if spy is None:
            await _rate(op, args.cycles, AGENTS, weft.proc.pid, infra.children(cluster.postmaster_pid()))
            await team.aclose()
            return
        with psycopg.connect(cluster.url, autocommit=True) as conn:
            conn.execute("ALTER SYSTEM SET pg_stat_statements.track_planning = on")
            conn.execute("SELECT pg_reload_conf()")
            conn.execute("SELECT pg_stat_statements_reset()")
        args.out.parent.mkdir(parents=True, exist_ok=True)
        command = [str(spy), "record", "--pid", str(weft.proc.pid), "--rate", "500", "--format", "raw",
                   "--output", str(args.out)] + ([] if args.blocking else ["--nonblocking"])  # fmt: skip
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1.0)
        cpu = time.process_time()
        sample = await drive(op, concurrency=AGENTS, count=args.cycles)
        proc.send_signal(signal.SIGINT)
        proc.wait(60)
        await team.aclose()
        client_ms = 1000 * (time.process_time() - cpu) / max(sample.completed, 1)
        rate = sample.completed / sample.elapsed
        print(
            f"{rate:.1f} cycles/s under py-spy, errors {sample.errors}, client CPU {client_ms:.2f} ms/cycle"
        )
        with psycopg.connect(cluster.url) as conn:
            print("\ncalls  plans  plan ms  exec ms  statement")
            for calls, plans, plan_ms, exec_ms, query in conn.execute(STATEMENTS).fetchall():
                print(f"{calls:6d} {plans:6d} {plan_ms:8} {exec_ms:8}  {query}")


async def _rate(op: Any, cycles: int, agents: int, server: int, backends: list[int]) -> None:
    """One timed series: its rate, and per cycle the server's CPU, its wait for a core, the CPU of
    the cluster's processes that were there when it began (the pool's backends among them; one
    that ends meanwhile is left out) and the load driver's."""
    before = {pid: _schedstat(pid) for pid in [server, *backends]}
    client = time.process_time()
    sample = await drive(op, concurrency=agents, count=cycles)
    client = time.process_time() - client
    after = {pid: _schedstat(pid) for pid in before}
    done = max(sample.completed, 1)
    on_cpu, waiting = (after[server][i] - before[server][i] for i in (0, 1))
    database = sum(after[pid][0] - before[pid][0] for pid in backends if after[pid] != (0, 0))
    print(
        f"{sample.completed / sample.elapsed:.1f} cycles/s, errors {sample.errors}; a cycle: server CPU"
        f" {1e3 * on_cpu / done:.3f} ms, PostgreSQL CPU {1e3 * database / done:.3f} ms; the server"
        f" waited for a core {waiting / sample.elapsed:.2f} of the series; the load driver's CPU"
        f" {1e3 * client / done:.3f} ms"
    )


def _schedstat(pid: int) -> tuple[float, float]:
    """Seconds on a core and seconds runnable but waiting for one, so far; (0, 0) once gone."""
    try:
        on_cpu, waiting, _ = Path(f"/proc/{pid}/schedstat").read_text().split()
    except (OSError, ValueError):
        return 0.0, 0.0
    return int(on_cpu) / 1e9, int(waiting) / 1e9


def _print_frames(raw: str) -> None:
    """The event loop's busy samples (idle waits and other threads left out): leaf and inclusive."""
    leaf: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    for line in raw.splitlines():
        stack, _, n = line.rpartition(" ")
        frames = stack.split(";")
        if not n.isdigit() or any(idle in frames[-1] for idle in IDLE):
            continue
        if not any("Runner.run" in frame for frame in frames):
            continue  # not the event loop's thread
        leaf[frames[-1]] += int(n)
        for frame in set(frames):
            inclusive[frame] += int(n)
    total = sum(leaf.values()) or 1
    print(f"\n{total} busy samples of the event loop")
    for title, counts in (("leaf", leaf), ("inclusive", inclusive)):
        print(f"\n{title}:")
        for frame, count in counts.most_common(40):
            print(f"{100 * count / total:5.1f} %  {frame}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
