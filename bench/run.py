"""`make bench` / `make bench-quick`: every suite against one throwaway PostgreSQL and Redis.

    python -m bench.run [--quick] [--only mcp,cycle,scale,push] [--large N]

Starts the cluster (pg_stat_statements and commit timestamps on) and Redis, migrates, then runs
each suite: its servers, its seeding, its interleaved rounds, its table and JSON under
artifacts/bench/. The exit status is 1 only when a series failed outright (errors), never for
a ratio: the machine is shared, so ratios are printed and kept, not enforced.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path

from bench import infra

SUITES = ("mcp", "cycle", "scale", "push")


def _setup_django(database_url: str) -> None:
    os.environ.update(
        DJANGO_SETTINGS_MODULE="weft.settings",
        WEFT_TESTING="1",  # no connection pool in the harness's own process
        DATABASE_URL=database_url,
        SECRET_KEY=infra.BENCH_SECRET,
        WEFT_DEBUG="0",
    )
    import logging

    import django

    django.setup()
    logging.getLogger("httpx").setLevel(logging.WARNING)


def services(stack: ExitStack) -> tuple[infra.Cluster, str]:
    """A throwaway PostgreSQL (migrated) and Redis, closed with `stack`; Django set up on them."""
    from tests.servers import redis_server

    cluster = stack.enter_context(infra.postgres())
    redis_url = stack.enter_context(redis_server())
    env = {**os.environ, **infra.weft_env(cluster.url, redis_url), "DJANGO_SETTINGS_MODULE": "weft.settings"}
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"], cwd=infra.PRODUCT, env=env, check=True,
        capture_output=True,
    )  # fmt: skip
    _setup_django(cluster.url)
    return cluster, redis_url


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls and rounds, 20k tasks (CI)")
    parser.add_argument("--only", default=",".join(SUITES), help="comma-separated suites")
    parser.add_argument("--large", type=int, default=None, help="tasks in the large workspace")
    parser.add_argument("--profile", action="store_true", help="one more pass of each series under py-spy")
    parser.add_argument(
        "--product",
        default=None,
        help="measure the Weft in this directory (e.g. another branch's git archive)",
    )
    args = parser.parse_args(argv)
    suites = [s for s in args.only.split(",") if s]
    unknown = set(suites) - set(SUITES)
    if unknown:
        parser.error(f"unknown suites: {sorted(unknown)}")
    from tests.servers import free_port

    if args.product:
        infra.PRODUCT = Path(args.product).resolve()
        # The harness's own seeding must use the measured checkout's models.
        sys.path.insert(0, str(infra.PRODUCT))
    began = time.monotonic()
    with ExitStack() as stack:
        cluster, redis_url = services(stack)
        from bench.harness import Context, machine

        ctx = Context(
            cluster=cluster, redis_url=redis_url, port=free_port(), quick=args.quick, profile=args.profile
        )
        ctx.results["large"] = args.large
        ctx.results["product"] = {"dir": str(infra.PRODUCT), "commit": _commit(infra.PRODUCT)}
        print(f"Weft benchmarks{' (quick)' if args.quick else ''}: {machine()}", flush=True)
        failed = asyncio.run(_run(ctx, suites, args.large))
    print(f"\nbench done in {time.monotonic() - began:.0f} s; JSON under {infra.ARTIFACTS}")
    # Suites run alone (--only) update their part of the summary; each part says when it ran.
    summary = infra.ARTIFACTS / "summary.json"
    merged = json.loads(summary.read_text()) if summary.exists() else {}
    for key, value in ctx.results.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict) and key not in SUITES:
            merged[key].update(value)
        else:
            merged[key] = value
    summary.write_text(json.dumps(merged, indent=2, default=str) + "\n")
    if failed:
        print(f"series with errors: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def _commit(directory: Path) -> str:
    """The measured checkout's commit (an export records it in .bench-commit)."""
    marker = directory / ".bench-commit"
    if marker.exists():
        return marker.read_text().strip()
    done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=directory, capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


async def _run(ctx: object, suites: list[str], large: int | None) -> list[str]:
    from bench import suite_cycle, suite_mcp, suite_push, suite_scale
    from bench.harness import Context

    assert isinstance(ctx, Context)
    runners = {
        "mcp": suite_mcp.run,
        "cycle": suite_cycle.run,
        "scale": lambda c: suite_scale.run(c, large=large),
        "push": suite_push.run,
    }
    for suite in suites:
        print(f"\n# {suite}", flush=True)
        await runners[suite](ctx)
    failed = []
    for name, payload in ctx.results.items():
        if name in SUITES and isinstance(payload, dict):
            failed += [f"{name}/{s}" for s, data in payload.get("series", {}).items() if data.get("errors")]
    return failed


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
