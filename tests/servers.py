"""Throwaway PostgreSQL and Redis servers for tests and benchmarks.

`python -m tests.servers [--postgres] [--redis] -- CMD ...` starts each server on a free
loopback port in a temporary directory, runs CMD with DATABASE_URL / REDIS_URL set, then
stops the servers and removes their files. No pre-existing server is assumed.
PostgreSQL refuses to run as root, so as root the cluster runs as the `postgres` user
(created when missing).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _pg_user() -> str | None:
    """The account that runs the cluster when we are root (None: run as ourselves)."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "postgres"], check=True)
    return "postgres"


def _as(user: str | None, cmd: list[str]) -> list[str]:
    return ["runuser", "-u", user, "--", *cmd] if user else cmd


def _wait_for_port(port: int, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return
        time.sleep(0.1)
    raise RuntimeError(f"{what} did not start on port {port} within {timeout}s")


def pg_ctl(data_dir: str, *args: str) -> list[str]:
    """The `pg_ctl` command line for a cluster of ours (fault tests restart it)."""
    return _as(_pg_user(), ["pg_ctl", "-D", data_dir, *args])


@contextlib.contextmanager
def postgres_cluster(info: dict[str, str] | None = None) -> Iterator[str]:
    """A fresh PostgreSQL cluster; yields its DATABASE_URL. `info` gets WEFT_TEST_PGDATA."""
    user = _pg_user()
    root = Path(tempfile.mkdtemp(prefix="weft-pg-"))
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
        "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
    )
    subprocess.run(
        _as(user, ["pg_ctl", "-D", str(data), "-o", options, "-l", str(root / "log"), "-w", "start"]),
        check=True,
        stdout=subprocess.DEVNULL,
    )
    try:
        _wait_for_port(port, 30, "PostgreSQL")
        subprocess.run(
            _as(user, ["createdb", "-h", "127.0.0.1", "-p", str(port), "-U", "weft", "weft"]),
            check=True,
        )
        if info is not None:
            info["WEFT_TEST_PGDATA"] = str(data)
        yield f"postgresql://weft@127.0.0.1:{port}/weft"
    finally:
        subprocess.run(
            _as(user, ["pg_ctl", "-D", str(data), "-m", "immediate", "-w", "stop"]),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def redis_server(info: dict[str, str] | None = None) -> Iterator[str]:
    """A fresh Redis server without persistence; yields its REDIS_URL. `info` gets WEFT_TEST_REDIS_PID."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("redis-server is not installed (apt-get install redis-server)")
    port = free_port()
    root = Path(tempfile.mkdtemp(prefix="weft-redis-"))
    proc = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(root),
        ],
        stdout=subprocess.DEVNULL,
    )
    try:
        _wait_for_port(port, 15, "Redis")
        if info is not None:
            info["WEFT_TEST_REDIS_PID"] = str(proc.pid)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(root, ignore_errors=True)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", action="store_true")
    parser.add_argument("--redis", action="store_true")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to run after --")
    env = dict(os.environ)
    with contextlib.ExitStack() as stack:
        # Fault tests also get the cluster's data directory and the Redis pid (to restart, freeze).
        if args.postgres:
            env["DATABASE_URL"] = stack.enter_context(postgres_cluster(env))
        if args.redis:
            env["WEFT_TEST_REDIS_URL"] = stack.enter_context(redis_server(env))
        return subprocess.call(command, env=env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
