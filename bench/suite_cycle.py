"""The agent loop's unit of work: start_task + complete_task at 16 agents, beside PostgreSQL queues.

Same PostgreSQL, same run, interleaved: Weft's cycle (16 agents, each its own OAuth client,
token and keep-alive connection, each claiming its own Todo tasks), the cycle with
`complete_task(startNext: true)` when the server offers the argument, pgqueuer (batch 1 and 10,
16 workers) and procrastinate (one worker, concurrency 16) draining no-op jobs, and the claim
and completion as raw SQL through pgbench at 16 clients — the ceiling: Weft's own statements with
none of the Python around them. Weft's series run as many cycles a round as the queues drain
jobs (2,000). Every series starts from vacuumed tables (`settle`).
"""

from __future__ import annotations

import math
import re
import subprocess
import time
from pathlib import Path
from typing import Any

import psycopg
from asgiref.sync import sync_to_async

from bench import infra, seed
from bench.driver import McpClient, ToolError, drive
from bench.harness import Context, interleave, report
from bench.stats import Sample, ratio

AGENTS = 16
OUTCOME = "Did what the task said."


def _claim_of(data: Any, not_run: str) -> tuple[str, str] | None:
    """A (runId, leaseToken) pair anywhere in a response, other than the run just completed."""
    if isinstance(data, dict):
        run, token = data.get("runId"), data.get("leaseToken")
        if isinstance(run, str) and isinstance(token, str) and run != not_run:
            return run, token
        values = list(data.values())
    elif isinstance(data, list):
        values = data
    else:
        return None
    for value in values:
        found = _claim_of(value, not_run)
        if found:
            return found
    return None


async def offers_start_next(client: McpClient) -> bool:
    """Whether complete_task's input schema names `startNext` (the server refuses it otherwise)."""
    tools = (await client.rpc("tools/list", {}))["tools"]
    complete = next(t for t in tools if t["name"] == "complete_task")
    return "startNext" in (complete.get("inputSchema") or {}).get("properties", {})


class Agents:
    """16 agents in one workspace, each with its own Todo tasks (a plain cycle never races)."""

    def __init__(self, base: str, tokens: list[str], ids: list[list[int]]) -> None:
        self.clients = [McpClient(base, token) for token in tokens]
        self.ids = [iter(own) for own in ids]
        self.held: list[tuple[str, str] | None] = [None] * len(tokens)
        self.requests = 0

    async def start(self, i: int) -> tuple[str, str]:
        while True:
            self.requests += 1
            try:
                data = await self.clients[i].call("start_task", {"id": next(self.ids[i])})
            except ToolError as error:
                # With startNext another agent's completion may have taken this one: the next.
                if (error.data.get("error") or {}).get("code") == "already_claimed":
                    continue
                raise
            return data["runId"], data["leaseToken"]

    async def cycle(self, i: int) -> float | None:
        began = time.perf_counter()
        try:
            run, token = await self.start(i)
            self.requests += 1
            await self.clients[i].call(
                "complete_task", {"runId": run, "leaseToken": token, "outcome": OUTCOME}
            )
        except ToolError as error:
            print(f"  cycle error: {error}"[:300])
            return None
        return time.perf_counter() - began

    async def cycle_next(self, i: int) -> float | None:
        """complete_task(startNext) answers with the next claim; start_task only when it brought none."""
        began = time.perf_counter()
        try:
            held = self.held[i] or await self.start(i)
            self.requests += 1
            data = await self.clients[i].call(
                "complete_task",
                {"runId": held[0], "leaseToken": held[1], "outcome": OUTCOME, "startNext": True},
            )
        except ToolError as error:
            print(f"  cycle error: {error}"[:300])
            self.held[i] = None
            return None
        self.held[i] = _claim_of(data, held[0])
        return time.perf_counter() - began

    async def aclose(self) -> None:
        for client in self.clients:
            await client.aclose()


def _insert(cursor: psycopg.Cursor[Any], table: str, values: dict[str, str]) -> str:
    """INSERT of `values` (SQL expressions) into `table`, every other required column given a zero value."""
    cursor.execute(
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = %s"
        " AND is_nullable = 'NO' AND column_default IS NULL AND column_name <> 'id'",
        [table],
    )
    zero = {
        "jsonb": "'[]'::jsonb",
        "boolean": "false",
        "text": "''",
        "character varying": "''",
        "uuid": "gen_random_uuid()",
    }
    filled = dict(values)
    for name, kind in cursor.fetchall():
        if name not in filled:
            filled[name] = zero.get(kind, "now()" if "timestamp" in kind else "0")
    cols = ", ".join(f'"{c}"' for c in filled)
    return f"INSERT INTO {table} ({cols}) VALUES ({', '.join(filled.values())})"


def pgbench_script(cluster: infra.Cluster, path: Path) -> None:
    """The claim and the completion as Weft writes them, two transactions, as one pgbench transaction.

    Claim: the task's row read by id (an agent claims the id get_my_work named; here each client
    takes the next id of a queue table, a primary-key lookup), then the conditional UPDATE on (id,
    epoch, column) boards/services/claim.py makes, the run and the run.started event. Completion:
    the fenced UPDATE of the run (token, epoch, live, unexpired), the report, the task to Done, the
    run.completed event.
    """
    with cluster.connect() as conn, conn.cursor() as cursor:
        run = _insert(cursor, "boards_run", {
            "run_id": "gen_random_uuid()", "workspace_id": ":ws", "task_id": ":task_id",
            "connection_id": ":conn", "lease_token_hash": "md5(:task_id::text)", "epoch": ":epoch",
            "state": "'active'", "started_at": "now()", "last_heartbeat_at": "now()",
            "lease_expires_at": "now() + interval '20 minutes'",
        })  # fmt: skip
        started = _insert(cursor, "weft_event", {
            "workspace_id": ":ws", "type": "'run.started'", "entity_type": "'run'",
            "entity_id": ":run_id::text", "payload": "jsonb_build_object('taskId', :task_id)",
            "epoch": ":epoch", "created_at": "now()",
        })  # fmt: skip
        report_row = _insert(cursor, "boards_report", {
            "workspace_id": ":ws", "task_id": ":task_id", "run_id": ":run_id", "outcome": f"'{OUTCOME}'",
            "created_at": "now()",
        })  # fmt: skip
        completed = started.replace("'run.started'", "'run.completed'")
        cursor.execute("CREATE TABLE IF NOT EXISTS bench_claim_queue (n bigint PRIMARY KEY, task_id bigint)")
        cursor.execute("CREATE SEQUENCE IF NOT EXISTS bench_claim_next")
    path.write_text(
        "BEGIN;\n"
        "SELECT t.id AS picked, t.epoch AS old_epoch FROM bench_claim_queue q JOIN boards_task t"
        " ON t.id = q.task_id WHERE q.n = (SELECT nextval('bench_claim_next'))"
        " AND t.workspace_id = :ws \\gset\n"
        "UPDATE boards_task SET epoch = epoch + 1, \"column\" = 'doing', assignee_connection_id = :conn,"
        " updated_at = now() WHERE id = :picked AND epoch = :old_epoch AND \"column\" = 'todo'"
        " RETURNING id AS task_id, epoch \\gset\n"
        f"{run} RETURNING id AS run_id \\gset\n"
        f"{started};\n"
        "COMMIT;\n"
        "BEGIN;\n"
        "UPDATE boards_run SET state = 'done', lease_token_hash = '', ended_at = now(),"
        " end_reason = 'completed'"
        " WHERE id = :run_id AND lease_token_hash = md5(:task_id::text) AND epoch = :epoch"
        " AND state = 'active' AND lease_expires_at > now();\n"
        f"{report_row};\n"
        "UPDATE boards_task SET \"column\" = 'done', updated_at = now()"
        " WHERE id = :task_id AND epoch = :epoch;\n"
        f"{completed};\n"
        "COMMIT;\n"
    )


def fill_claim_queue(cluster: infra.Cluster, task_ids: list[int]) -> None:
    """The ids pgbench's clients claim, one each in turn (bench_claim_next numbers them)."""
    with cluster.connect() as conn:
        conn.execute("TRUNCATE bench_claim_queue")
        conn.execute(
            "INSERT INTO bench_claim_queue SELECT n, id"
            " FROM unnest(%s::bigint[]) WITH ORDINALITY AS u(id, n)",
            [task_ids],
        )
        conn.execute("ALTER SEQUENCE bench_claim_next RESTART WITH 1")


# The tables the cycle's series churn: Weft's claim and completion, the queues' job tables, pgbench's.
CHURNED = (
    "boards_task", "boards_run", "boards_report", "weft_event", "accounts_usage", "bench_claim_queue",
    "pgqueuer", "pgqueuer_log", "pgqueuer_statistics", "procrastinate_jobs", "procrastinate_events",
)  # fmt: skip


def settle(cluster: infra.Cluster) -> dict[str, float]:
    """Before every series, alike: the events an earlier series left unpositioned go through
    Weft's relay, then VACUUM ANALYZE of the churned tables, so no series meets the dead rows an
    earlier one left, or an autovacuum that one round got and another did not.

    pgbench writes Weft's event rows without the relay that positions them (the ceiling is the
    SQL alone): left there, its 4,800 events a round were positioned by the next Weft series'
    relay, inside that series' time — the plain cycle's, which follows pgbench in every rotation.
    Answers the events positioned and the dead tuples found (the statistics' count, which lags
    by about a second)."""
    from weft.events import relay

    positioned = len(relay())
    with cluster.connect() as conn:
        rows = conn.execute(
            "SELECT relname, n_dead_tup FROM pg_stat_user_tables WHERE relname = ANY(%s)", [list(CHURNED)]
        ).fetchall()
        for name, _ in rows:
            conn.execute(f"VACUUM (ANALYZE) {name}")
    return {"events_relayed": float(positioned), "dead_tuples_vacuumed": float(sum(dead for _, dead in rows))}


def pgbench(cluster: infra.Cluster, script: Path, where: seed.Place, conn_id: int, per_client: int) -> Sample:
    cmd = [
        "pgbench", "-n", "-c", str(AGENTS), "-j", "2", "-t", str(per_client), "-f", str(script),
        "-D", f"ws={where.workspace.pk}", "-D", f"conn={conn_id}", cluster.url,
    ]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    tps = re.search(r"tps = ([\d.]+) \(without initial connection time\)", done.stdout)
    failed = re.search(r"number of failed transactions: (\d+)", done.stdout)
    latency = re.search(r"latency average = ([\d.]+) ms", done.stdout)
    cycles = AGENTS * per_client
    rate = float(tps.group(1)) if tps else math.nan
    sample = Sample(
        elapsed=cycles / rate if rate else 0.0, completed=cycles, errors=int(failed.group(1)) if failed else 0
    )
    if latency:
        sample.latencies = [float(latency.group(1)) / 1000]  # pgbench reports the mean, not each cycle
    return sample


async def run(ctx: Context) -> None:
    jobs = 200 if ctx.quick else 2000
    # Weft's series run as many cycles a round as the queues drain jobs (2,000; 192 quick): a
    # stall, a relay or the last cycles in flight then weigh on every series alike, not five
    # times as much on Weft's.
    per_agent = jobs // AGENTS
    cycles = AGENTS * per_agent
    per_client = 20 if ctx.quick else 150
    need = (per_agent + 2) * (ctx.rounds + 1) + 10
    plain, nexts, ceiling = [await sync_to_async(seed.place)(n) for n in ("Cycle", "Cycle next", "Ceiling")]
    plain_agents = [await sync_to_async(seed.agent)(plain, ctx.resource, f"agent-{i}") for i in range(AGENTS)]
    next_agents = [await sync_to_async(seed.agent)(nexts, ctx.resource, f"next-{i}") for i in range(AGENTS)]
    ceiling_agent = await sync_to_async(seed.agent)(ceiling, ctx.resource, "pgbench")
    plain_ids = await sync_to_async(seed.tasks)(plain, need * AGENTS, column="todo")
    next_ids = await sync_to_async(seed.tasks)(nexts, need * AGENTS, column="todo")
    script = ctx.cluster.data.parent / "claim.sql"  # removed with the cluster
    await sync_to_async(pgbench_script)(ctx.cluster, script)

    def own(ids: list[int]) -> list[list[int]]:
        return [ids[i::AGENTS] for i in range(AGENTS)]

    with infra.weft_server(ctx.cluster.url, ctx.redis_url, ctx.port) as weft:
        pid = weft.proc.pid
        a = Agents(weft.base, [x.token for x in plain_agents], own(plain_ids))
        b = Agents(weft.base, [x.token for x in next_agents], own(next_ids))
        start_next = await offers_start_next(a.clients[0])

        async def weft_cycle() -> Sample:
            before = a.requests
            sample = await drive(a.cycle, concurrency=AGENTS, count=cycles, warmup=AGENTS)
            sample.extra["requests_per_cycle"] = (a.requests - before) / max(sample.completed + AGENTS, 1)
            return sample

        async def weft_cycle_next() -> Sample:
            if not start_next:
                return Sample()
            before = b.requests
            sample = await drive(b.cycle_next, concurrency=AGENTS, count=cycles, warmup=AGENTS)
            sample.extra["requests_per_cycle"] = (b.requests - before) / max(sample.completed + AGENTS, 1)
            return sample

        def queue(script_name: str, *args: str) -> Any:
            async def go() -> Sample:
                if script_name == "procrastinate_drain.py":
                    with ctx.cluster.connect() as conn:
                        conn.execute("DO $$ BEGIN TRUNCATE procrastinate_jobs CASCADE;"
                                     " EXCEPTION WHEN undefined_table THEN NULL; END $$")  # fmt: skip
                answer = await sync_to_async(infra.peer)(script_name, ctx.cluster.url, *args)
                return Sample(elapsed=float(answer["elapsed"]), completed=int(answer["jobs"]))

            return go

        async def ceiling_cycle() -> Sample:
            ids = await sync_to_async(seed.tasks)(ceiling, AGENTS * per_client, column="todo")
            await sync_to_async(fill_claim_queue)(ctx.cluster, ids)
            return await sync_to_async(pgbench)(
                ctx.cluster, script, ceiling, ceiling_agent.connection_id, per_client
            )

        summaries = await interleave(
            ctx,
            {
                "weft cycle, 16 agents": (weft_cycle, pid),
                "weft cycle startNext, 16 agents": (weft_cycle_next, pid),
                "pgqueuer batch 1, 16 workers": (queue("pgqueuer_drain.py", str(jobs), "1", "16"), None),
                "pgqueuer batch 10, 16 workers": (queue("pgqueuer_drain.py", str(jobs), "10", "16"), None),
                "procrastinate, concurrency 16": (queue("procrastinate_drain.py", str(jobs), "16"), None),
                "raw claim SQL, pgbench 16 clients": (ceiling_cycle, None),
            },
            settle=lambda: settle(ctx.cluster),
        )
        await a.aclose()
        await b.aclose()
    pgq = summaries["pgqueuer batch 1, 16 workers"].rate
    cycle = summaries["weft cycle, 16 agents"].rate
    nxt = summaries["weft cycle startNext, 16 agents"].rate if start_next else math.nan
    ceiling_rate = summaries["raw claim SQL, pgbench 16 clients"].rate
    ratios = [
        ("weft cycle / pgqueuer batch 1", ratio(cycle, pgq), "≥ 0.4"),
        (
            "weft cycle startNext / pgqueuer batch 1",
            ratio(nxt, pgq),
            "≥ 0.8" if start_next else "n/a: refused",
        ),
        ("weft cycle / raw claim SQL", ratio(cycle, ceiling_rate), "—"),
        ("pgqueuer batch 1 / raw claim SQL", ratio(pgq, ceiling_rate), "—"),
    ]
    report(
        ctx,
        "cycle",
        summaries,
        ratios,
        "per s: cycles (start_task + complete_task) for Weft and pgbench, jobs for the queues. Weft's p50 is"
        " one cycle's; pgbench's is its mean latency. SQL ms/op and stmts/op for the peers are per job."
        + ("" if start_next else " startNext: n/a — this server's complete_task does not take the argument."),
    )
