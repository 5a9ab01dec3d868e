"""The installed `weft` executable against Weft under uvicorn on PostgreSQL.

The server runs on pytest-django's test database (the tests are transactional) with a lease of
LEASE_SECONDS; each test signs in as alice's agent with an OAuth token in a config directory
of its own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.db import connection as db

from accounts.models import User, Workspace
from tests.mcp.harness import agent_token
from tests.mcp.server_process import ROOT, server_env
from tests.servers import _wait_for_port, free_port

WEFT = Path(sys.executable).with_name("weft")
LEASE_SECONDS = 6


@pytest.fixture
def postgres_server_db() -> None:
    """Skip on the SQLite pass; fail when DATABASE_URL names PostgreSQL but the tests are not on it."""
    if db.vendor == "postgresql":
        return
    if os.environ.get("DATABASE_URL", "").startswith("postgres"):
        pytest.fail("DATABASE_URL names PostgreSQL but the tests run on " + db.vendor)
    pytest.skip("needs PostgreSQL: run through `python -m tests.servers --postgres -- pytest`")


@pytest.fixture
def weft_url(postgres_server_db: None) -> Iterator[str]:
    s = db.settings_dict
    url = f"postgresql://{s['USER']}@{s['HOST']}:{s['PORT']}/{s['NAME']}"
    port = free_port()
    env = server_env(
        {
            "DATABASE_URL": url,
            "WEFT_TESTING": "1",
            "WEFT_TEST_LEASE_SECONDS": str(LEASE_SECONDS),
            "WEFT_DEVICE_INTERVAL_SECONDS": "1",
        },
        port,
    )
    proc = subprocess.Popen([sys.executable, "-m", "tests.cli.lease_server", str(port)], cwd=ROOT, env=env)
    try:
        _wait_for_port(port, 60, "uvicorn")
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(15)


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)

    def markers(self) -> list[str]:
        from weft.hints import marker_lines

        return marker_lines(self.out)


class Cli:
    """`weft …` as a script runs it: its own config directory, WEFT_URL set."""

    def __init__(self, url: str, home: Path) -> None:
        self.env = {
            **os.environ,
            "WEFT_URL": url,
            "XDG_CONFIG_HOME": str(home),
            "WEFT_CLI_POLL_SECONDS": "0.5",
        }
        self.env.pop("DJANGO_SETTINGS_MODULE", None)
        self.home = home

    def __call__(self, *args: str, timeout: float = 60, **env: Any) -> Result:
        done = subprocess.run(
            [str(WEFT), *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**self.env, **env},
            cwd="/",
        )
        return Result(done.returncode, done.stdout, done.stderr)

    def popen(self, *args: str, **env: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [str(WEFT), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**self.env, **env},
            cwd="/",
        )


@pytest.fixture
def cli(weft_url: str, tmp_path: Path) -> Cli:
    return Cli(weft_url, tmp_path / "config")


@pytest.fixture
def signed_in(cli: Cli, weft_url: str, alice: User, ws_a: Workspace) -> Cli:
    token, _ = agent_token(alice, ws_a, name="Weft CLI test", resource=[f"{weft_url}/api/mcp"])
    result = cli("login", f"--token={token}")  # a token may begin with "-"
    assert result.code == 0, result
    return cli


@pytest.fixture
def cli_person(weft_url: str, tmp_path: Path, alice: User, ws_a: Workspace) -> Cli:
    """alice herself: a personal access token made with "May decide my Inbox"."""
    from accounts.models import Seat
    from accounts.tokens import pat_create

    seat = Seat.objects.get(user=alice, workspace=ws_a)
    secret = pat_create(seat=seat, name="Inbox", expires_in_days=None, can_decide=True).secret
    person = Cli(weft_url, tmp_path / "person")
    assert person("login", f"--token={secret}").code == 0
    return person
