"""A PostgreSQL restart costs at most the requests in flight, and those keep the hint contract.

Weft runs under uvicorn on the test database with psycopg's pool (as in production); agents
call MCP tools from threads while the throwaway cluster is restarted with `-m immediate`.
Tokens are verified before the restart: the verified-token cache (30 s) carries them through.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from django.db import connection as db

from accounts.models import Plan, Workspace
from tests.mcp.harness import ACCEPT, PROTOCOL, agent_token
from tests.mcp.server_process import uvicorn_server
from tests.servers import pg_ctl
from weft.hints import problems

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
AGENTS = 4
TOOLS: list[tuple[str, dict[str, Any]]] = [("get_my_work", {}), ("get_board_state", {})]


@pytest.fixture
def pgdata(on_postgres) -> str:
    # Set by tests.servers beside DATABASE_URL: its absence on the PostgreSQL pass is a failure.
    return os.environ["WEFT_TEST_PGDATA"]


def _database_url() -> str:
    s = db.settings_dict
    return f"postgresql://{s['USER']}@{s['HOST']}:{s['PORT']}/{s['NAME']}"


@pytest.fixture
def weft(pgdata) -> Iterator[str]:
    # No WEFT_TESTING: the server uses psycopg's pool, whose checks are what is under test.
    with uvicorn_server({"DATABASE_URL": _database_url(), "DATABASE_POOL_MIN": str(AGENTS)}) as base:
        yield base


def _restart(pgdata: str) -> None:
    """`pg_ctl restart -m immediate`, then wait (bounded) until the database takes connections."""
    log = str(Path(pgdata).parent / "log")
    # The throwaway cluster runs with synchronous_commit=off: an immediate stop could lose the
    # last commits (this test's own tokens). A checkpoint writes them out first.
    with psycopg.connect(_database_url(), autocommit=True) as conn:
        conn.execute("CHECKPOINT")
    subprocess.run(pg_ctl(pgdata, "restart", "-m", "immediate", "-w", "-t", "60", "-l", log), check=True,
                   stdout=subprocess.DEVNULL, timeout=90)  # fmt: skip
    deadline = time.monotonic() + 30
    while True:
        try:
            with psycopg.connect(_database_url(), connect_timeout=2) as conn:
                conn.execute("SELECT 1")
            break
        except psycopg.OperationalError:
            assert time.monotonic() < deadline, "PostgreSQL did not come back within 30s"
            time.sleep(0.1)
    # This test's own connection died with the server: the next query opens a new one.
    db.close()


def _outcome(response: httpx.Response) -> str:
    """ok, unavailable or internal_error — or `bad: …` for anything outside the contract."""
    if response.status_code != 200:
        return f"bad: HTTP {response.status_code} {response.text[:300]}"
    result = response.json().get("result")
    if result is None:
        return f"bad: {response.text[:300]}"
    text = "\n".join(block["text"] for block in result["content"] if block["type"] == "text")
    structured = result.get("structuredContent") or {}
    if problems(text, structured):
        return f"bad: {problems(text, structured)} in {text[:300]}"
    if not result.get("isError"):
        return "ok"
    code = structured.get("error", {}).get("code")
    if code in {"unavailable", "internal_error"} and structured["_next_action"].startswith("Wait: "):
        return str(code)
    return f"bad: {code}: {text[:300]}"


class Agent(threading.Thread):
    """Calls tools in a loop until stopped (at most 3000 calls); records (started, outcome)."""

    def __init__(self, base: str, token: str, stop: threading.Event) -> None:
        super().__init__(daemon=True)
        self.base, self.token, self.stop = base, token, stop
        self.calls: list[tuple[float, str]] = []

    def call(self, client: httpx.Client, n: int) -> tuple[float, str]:
        name, arguments = TOOLS[n % len(TOOLS)]
        started = time.monotonic()
        params = {"name": name, "arguments": arguments}
        body = {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params}
        auth = f"Bearer {self.token}"
        headers = {"accept": ACCEPT, "mcp-protocol-version": PROTOCOL, "authorization": auth}
        try:
            return started, _outcome(client.post("/api/mcp", json=body, headers=headers))
        except httpx.HTTPError as exc:
            return started, f"bad: {exc!r}"

    def run(self) -> None:
        with httpx.Client(base_url=self.base, timeout=30) as client:
            for n in range(3000):
                if self.stop.is_set():
                    return
                self.calls.append(self.call(client, n))
                time.sleep(0.01)


def _agents(base: str, tokens: list[str]) -> tuple[list[Agent], threading.Event]:
    stop = threading.Event()
    return [Agent(base, token, stop) for token in tokens], stop


def _tokens(base: str, alice, ws: Workspace) -> list[str]:  # type: ignore[no-untyped-def]
    ws.plan = Plan.named(Plan.PRO)  # no monthly call cap under load
    ws.save(update_fields=["plan"])
    resource = [f"{base}/api/mcp"]
    return [agent_token(alice, ws, name=f"Agent {i}", resource=resource)[0] for i in range(AGENTS)]


def _warm(base: str, tokens: list[str]) -> None:
    """Every agent succeeds once, concurrently: tokens verified, the pool holds live connections."""
    agents, stop = _agents(base, tokens)
    with httpx.Client(base_url=base, timeout=30) as client:
        results = [agent.call(client, n) for agent in agents for n in range(len(TOOLS))]
    assert [outcome for _, outcome in results] == ["ok"] * len(results), results
    stop.set()


def test_it_keeps_the_contract_while_postgres_restarts_under_load(weft, pgdata, alice, ws_a):
    tokens = _tokens(weft, alice, ws_a)
    _warm(weft, tokens)
    agents, stop = _agents(weft, tokens)
    for agent in agents:
        agent.start()
    try:
        time.sleep(1)
        _restart(pgdata)
        back = time.monotonic()
        # Bounded recovery: within 20 s of the database taking connections, every call succeeds.
        deadline = back + 20
        while time.monotonic() < deadline and not all(
            any(t > back and o == "ok" for t, o in agent.calls[-3:]) for agent in agents
        ):
            time.sleep(0.2)
        recovered = time.monotonic()
        time.sleep(2)
    finally:
        stop.set()
        for agent in agents:
            agent.join(40)
    calls = [call for agent in agents for call in agent.calls]
    bad = [outcome for _, outcome in calls if outcome.startswith("bad")]
    assert not bad, bad[:5]
    after = [outcome for started, outcome in calls if started > recovered]
    assert len(after) >= AGENTS * 5, f"only {len(after)} calls after recovery"
    assert set(after) == {"ok"}, [o for o in after if o != "ok"][:5]


def test_it_costs_no_request_when_postgres_restarts_between_calls(weft, pgdata, alice, ws_a):
    # The pool holds AGENTS idle connections that the restart breaks; none may reach a request.
    tokens = _tokens(weft, alice, ws_a)
    _warm(weft, tokens)
    _restart(pgdata)
    agents, _stop = _agents(weft, tokens)
    results: list[list[tuple[float, str]]] = [[] for _ in agents]

    def burst(i: int) -> None:
        with httpx.Client(base_url=weft, timeout=30) as client:
            results[i] = [agents[i].call(client, n) for n in range(5)]

    threads = [threading.Thread(target=burst, args=(i,)) for i in range(len(agents))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    outcomes: list[Any] = [outcome for calls in results for _, outcome in calls]
    assert outcomes == ["ok"] * (AGENTS * 5), outcomes
