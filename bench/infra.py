"""The benchmark's machinery: a throwaway PostgreSQL with pg_stat_statements, the servers under
uvicorn, the peers' interpreter, and what a process spent on CPU.

The cluster is tests/servers.py's, with two settings more: pg_stat_statements (SQL time and
statement counts per call) and track_commit_timestamp (the push suite's commit time).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from tests.mcp.server_process import server_env
from tests.servers import _as, _pg_user, _wait_for_port, free_port

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = Path(os.environ.get("WEFT_BENCH_ARTIFACTS", ROOT / "artifacts" / "bench"))
# The peers' own environment (make bench builds it from bench/requirements.txt).
BENCH_PYTHON = Path(os.environ.get("WEFT_BENCH_PYTHON", ROOT / ".venv-bench" / "bin" / "python"))
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
# The checkout whose Weft is measured (--product): this one by default, or another branch's export.
PRODUCT = ROOT


@dataclass
class Cluster:
    url: str
    data: Path

    def postmaster_pid(self) -> int:
        return int((self.data / "postmaster.pid").read_text().split()[0])

    def connect(self) -> psycopg.Connection:
        return psycopg.connect(self.url, autocommit=True)


@contextlib.contextmanager
def postgres() -> Iterator[Cluster]:
    """A fresh cluster on a free port, with the same durability settings as the tests' (fsync off)."""
    user = _pg_user()
    root = Path(tempfile.mkdtemp(prefix="weft-bench-pg-"))
    data = root / "data"
    if user:
        shutil.chown(root, user=user)
    port = free_port()
    subprocess.run(
        _as(user, ["initdb", "-D", str(data), "-U", "weft", "--auth=trust", "-E", "UTF8", "--no-sync"]),
        check=True,
        stdout=subprocess.DEVNULL,
    )
    options = (
        f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={root} "
        "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300 "
        "-c shared_buffers=512MB -c shared_preload_libraries=pg_stat_statements "
        "-c pg_stat_statements.track=all -c track_commit_timestamp=on"
    )
    subprocess.run(
        _as(user, ["pg_ctl", "-D", str(data), "-o", options, "-l", str(root / "log"), "-w", "start"]),
        check=True,
        stdout=subprocess.DEVNULL,
    )
    try:
        _wait_for_port(port, 30, "PostgreSQL")
        subprocess.run(
            _as(user, ["createdb", "-h", "127.0.0.1", "-p", str(port), "-U", "weft", "weft"]), check=True
        )
        url = f"postgresql://weft@127.0.0.1:{port}/weft"
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        yield Cluster(url=url, data=data)
    finally:
        subprocess.run(
            _as(user, ["pg_ctl", "-D", str(data), "-m", "immediate", "-w", "stop"]),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        shutil.rmtree(root, ignore_errors=True)


def cpu_seconds(pid: int) -> float:
    """User + system CPU of one process so far (0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    # After the command: state is fields[0]; utime, stime, cutime, cstime are fields 11..14.
    return sum(int(v) for v in fields[11:15]) / CLOCK_TICKS


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError):
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry.name))
    return found


def cluster_cpu(cluster: Cluster) -> float:
    """CPU of the postmaster and its backends (ended backends are in the postmaster's children time)."""
    pid = cluster.postmaster_pid()
    return cpu_seconds(pid) + sum(cpu_seconds(child) for child in children(pid))


def sql_totals(cluster: Cluster) -> tuple[int, float]:
    """(statements, milliseconds executing them) in pg_stat_statements, the harness's own excluded."""
    with cluster.connect() as conn:
        row = conn.execute(
            "SELECT coalesce(sum(calls), 0), coalesce(sum(total_exec_time), 0) FROM pg_stat_statements"
            " WHERE query NOT ILIKE '%pg_stat_statements%' AND query NOT ILIKE '%pg_xact_commit_timestamp%'"
        ).fetchone()
    assert row is not None
    return int(row[0]), float(row[1])


def sql_top(cluster: Cluster, limit: int = 6) -> list[dict[str, Any]]:
    """The statements that took the most execution time since the last reset (lock waits included)."""
    with cluster.connect() as conn:
        rows = conn.execute(
            "SELECT left(regexp_replace(query, '\\s+', ' ', 'g'), 220), calls, total_exec_time,"
            " mean_exec_time FROM pg_stat_statements WHERE query NOT ILIKE '%%pg_stat_statements%%'"
            " ORDER BY total_exec_time DESC LIMIT %s",
            [limit],
        ).fetchall()
    return [
        {"query": q, "calls": int(c), "total_ms": round(float(t), 2), "mean_ms": round(float(m), 3)}
        for q, c, t, m in rows
    ]


def sql_reset(cluster: Cluster) -> None:
    with cluster.connect() as conn:
        conn.execute("SELECT pg_stat_statements_reset()")


@dataclass
class Server:
    base: str
    proc: subprocess.Popen[bytes]


def _serve(app: str, env: dict[str, str], port: int, cwd: Path = ROOT) -> Iterator[Server]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", app, "--host", "127.0.0.1", "--port", str(port),
         "--lifespan", "on", "--log-level", "warning", "--workers", "1"],
        cwd=cwd,
        env=env,
    )  # fmt: skip
    try:
        _wait_for_port(port, 60, "uvicorn")
        yield Server(base=f"http://127.0.0.1:{port}", proc=proc)
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


BENCH_SECRET = secrets.token_urlsafe(50)


def weft_env(database_url: str, redis_url: str) -> dict[str, str]:
    """Production settings: debug off, PostgreSQL through psycopg's pool, Redis channel layer."""
    return {
        "WEFT_MCP_BENCH_NOOP": "1",
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "WEFT_DEBUG": "0",
        "SECRET_KEY": BENCH_SECRET,
        "WEFT_EMBEDDED_TIMER": "0",
    }


@contextlib.contextmanager
def weft_server(database_url: str, redis_url: str, port: int) -> Iterator[Server]:
    """Weft under uvicorn, one worker, on `port` (the bench keeps one port: tokens name its URL)."""
    env = server_env(weft_env(database_url, redis_url), port)
    yield from _serve("weft.asgi:application", env, port, cwd=PRODUCT)


@contextlib.contextmanager
def bare_server() -> Iterator[Server]:
    """The official SDK's no-op app (bench/peers/bare_mcp.py) with Weft's transport settings."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO")}
    yield from _serve("bench.peers.bare_mcp:app", env, port)


def peer(script: str, *args: str, timeout: float = 600) -> dict[str, Any]:
    """Run a peer script (bench/peers/) with the bench environment's interpreter; its JSON answer."""
    import json

    if not BENCH_PYTHON.exists():
        raise RuntimeError(f"{BENCH_PYTHON} is missing: `make bench` builds it from bench/requirements.txt")
    done = subprocess.run(
        [str(BENCH_PYTHON), str(ROOT / "bench" / "peers" / script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{script} failed ({done.returncode}): {done.stderr[-2000:]}")
    answer: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return answer


def py_spy() -> Path | None:
    """py-spy from the bench environment (bench/requirements.txt), if it is there."""
    path = BENCH_PYTHON.parent / "py-spy"
    return path if path.exists() else None


def wait_quiet(seconds: float = 0.3) -> None:
    """A short pause between series, so one series' stragglers never land in the next."""
    time.sleep(seconds)
