"""Weft under uvicorn in a subprocess on a free loopback port, for end-to-end tests and benchmarks."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from tests.servers import _wait_for_port, free_port

ROOT = Path(__file__).resolve().parents[2]


def server_env(extra: dict[str, str], port: int) -> dict[str, str]:
    """The server's environment: debug on unless `extra` says otherwise (the benchmark turns it off)."""
    env = {**os.environ, "WEFT_DEBUG": "1", **extra}
    env.update(
        WEFT_BASE_URL=f"http://127.0.0.1:{port}",
        WEFT_EMBEDDED_TIMER="0",
        DJANGO_SETTINGS_MODULE="weft.settings",
    )
    if "WEFT_TESTING" not in extra:
        env.pop("WEFT_TESTING", None)
    if not env.get("DATABASE_URL"):
        env.pop("DATABASE_URL", None)
    return env


@contextlib.contextmanager
def uvicorn_server(extra_env: dict[str, str], *, migrate: bool = False, workers: int = 1) -> Iterator[str]:
    """Start Weft; yields its base URL. `migrate` first runs `manage.py migrate` on its database."""
    port = free_port()
    env = server_env(extra_env, port)
    python = sys.executable
    if migrate:
        subprocess.run(
            [python, "manage.py", "migrate", "--noinput"], cwd=ROOT, env=env, check=True, capture_output=True
        )
    proc = subprocess.Popen(
        [python, "-m", "uvicorn", "weft.asgi:application", "--host", "127.0.0.1", "--port", str(port),
         "--lifespan", "on", "--log-level", "warning", "--workers", str(workers)],
        cwd=ROOT,
        env=env,
    )  # fmt: skip
    try:
        _wait_for_port(port, 60, "uvicorn")
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
