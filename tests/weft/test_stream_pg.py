"""On PostgreSQL: 200 idle stream clients hold no database connection, and all of them stay live."""

from __future__ import annotations

import asyncio
import os
import statistics
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack

import httpx
import psycopg
import pytest
from django.db import connection, connections

from accounts.models import Workspace
from tests.web.test_browser import LiveServer, file_database  # noqa: F401  (a fixture)
from tests.weft.test_stream import emit, live, token  # noqa: F401  (fixtures)
from weft.stream import STREAM_PATH

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
CLIENTS = 200
COUNT_BACKENDS = (
    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
)


@pytest.fixture
def postgres() -> str:
    """The test database's URL; on the PostgreSQL pass (DATABASE_URL set) this test never skips."""
    if connection.vendor != "postgresql":
        assert not os.environ.get("DATABASE_URL"), "DATABASE_URL is set, yet the tests run on SQLite"
        pytest.skip("needs PostgreSQL: run through `python -m tests.servers --postgres -- pytest`")
    s = connection.settings_dict
    return f"postgresql://{s['USER']}@{s['HOST']}:{s['PORT']}/{s['NAME']}"


def _emit_in_thread(ws: Workspace) -> int:
    try:
        return emit(ws, "test.last")
    finally:
        connections.close_all()


async def _first_block(lines: AsyncIterator[str]) -> list[str]:
    got: list[str] = []
    async for line in lines:
        if not line:
            return got
        got.append(line)
    raise AssertionError("the stream ended")


async def _idle_clients(
    server: LiveServer, bearer: str, ws: Workspace, count_backends: Callable[[], int]
) -> list[int]:
    headers = {"authorization": f"Bearer {bearer}"}
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    async with httpx.AsyncClient(limits=limits, timeout=60) as client, AsyncExitStack() as stack:
        responses = [
            await stack.enter_async_context(client.stream("GET", server.url + STREAM_PATH, headers=headers))
            for _ in range(CLIENTS)
        ]
        readers = [response.aiter_lines() for response in responses]
        for reader in readers:
            assert (await _first_block(reader))[0] == ": connected"
        samples = []
        for _ in range(20):
            samples.append(count_backends())
            await asyncio.sleep(0.1)
        # Every client is still live: one new event reaches all of them.
        position = await asyncio.to_thread(_emit_in_thread, ws)
        for reader in readers:
            block = await asyncio.wait_for(_first_block(reader), 30)
            assert f"id: {position}" in block, block
    return samples


def test_200_idle_stream_clients_hold_no_database_connection(postgres, request, ws_a, settings):
    server, bearer = request.getfixturevalue("live"), request.getfixturevalue("token")
    settings.WEFT_STREAM_HEARTBEAT_SECONDS = 120
    with psycopg.connect(postgres, autocommit=True) as probe:

        def count_backends() -> int:
            row = probe.execute(COUNT_BACKENDS).fetchone()
            assert row is not None
            return int(row[0])

        before = count_backends()
        samples = asyncio.run(_idle_clients(server, bearer, ws_a, count_backends))
    # At most the poller's one short read per tick, never a connection per client.
    assert max(samples) <= before + 1, (before, samples)
    assert statistics.median(samples) == before, (before, samples)
