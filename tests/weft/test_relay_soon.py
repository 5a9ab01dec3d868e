"""`relay_loop.relay_soon()`: the relay the event loop runs after its own commits (the
one-statement claim and completion on weft.apool) runs one at a time per loop, and calls made
while it runs coalesce into exactly one more run after it, so nothing committed meanwhile is left
for the periodic relay. (What one relay does is tests/weft/test_relay_loop.py's.)"""

from __future__ import annotations

import asyncio

import pytest

from weft import relay_loop


def test_it_coalesces_calls_made_while_a_relay_runs_into_one_more(monkeypatch: pytest.MonkeyPatch) -> None:
    runs: list[int] = []
    started = asyncio.Event()

    async def slow_relay() -> None:
        runs.append(1)
        started.set()
        await asyncio.sleep(0.1)

    monkeypatch.setattr(relay_loop, "_relay", slow_relay)

    async def scenario() -> None:
        relay_loop.relay_soon()
        await started.wait()
        for _ in range(5):  # commits while the first relay runs
            relay_loop.relay_soon()
        await relay_loop.settled()

    asyncio.run(scenario())
    assert len(runs) == 2  # the first, and one more for everything committed while it ran


def test_a_call_after_the_relay_finished_starts_a_new_one(monkeypatch: pytest.MonkeyPatch) -> None:
    runs: list[int] = []

    async def relay() -> None:
        runs.append(1)

    monkeypatch.setattr(relay_loop, "_relay", relay)

    async def scenario() -> None:
        for _ in range(3):
            relay_loop.relay_soon()
            await relay_loop.settled()

    asyncio.run(scenario())
    assert len(runs) == 3


def test_a_failing_relay_leaves_the_pump_ready(monkeypatch: pytest.MonkeyPatch) -> None:
    """A relay that fails (its connection lost) is logged, and the next commit relays again."""
    runs: list[int] = []

    async def failing() -> None:
        runs.append(1)
        if len(runs) == 1:
            raise RuntimeError("the database went away")

    monkeypatch.setattr(relay_loop, "_relay", failing)

    async def scenario() -> None:
        relay_loop.relay_soon()
        await relay_loop.settled()
        relay_loop.relay_soon()
        await relay_loop.settled()

    asyncio.run(scenario())
    assert len(runs) == 2


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("on_postgres")
def test_shutdown_lets_a_scheduled_relay_run_before_it_closes_the_pool() -> None:
    """The last calls' relay runs before the lifespan closes the loop's pool; run after it, the
    relay opened a new pool that stayed open past shutdown."""
    from tests.mcp.harness import lifespan
    from weft import apool
    from weft.asgi import application

    ran: list[bool] = []
    relay = relay_loop._relay

    async def counted() -> None:
        await relay()
        ran.append(True)

    async def scenario() -> object:
        async with lifespan(application):
            await apool.fetch_one("SELECT 1", {})
            relay_loop.relay_soon()  # as a completion's commit does, just before shutdown
        return apool._Pools.pool

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(relay_loop, "_relay", counted)
        left_open = asyncio.run(scenario())
    assert ran == [True]
    assert left_open is None
