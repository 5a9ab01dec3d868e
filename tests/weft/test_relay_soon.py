"""`events.relay_soon()`: the relay the event loop runs after its own commits (the one-statement
claim and completion on weft.apool) runs in a worker thread, one at a time per loop, and calls
made while it runs coalesce into exactly one more run after it, so nothing committed meanwhile
is left for the periodic relay."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from weft import events


def _pump_done() -> bool:
    pump = events._pumps.get(asyncio.get_running_loop())
    return pump is None or pump.task is None


def test_it_coalesces_calls_made_while_a_relay_runs_into_one_more(monkeypatch: pytest.MonkeyPatch) -> None:
    runs: list[str] = []
    started = threading.Event()

    def slow_relay() -> None:
        runs.append(threading.current_thread().name)
        started.set()
        time.sleep(0.1)

    monkeypatch.setattr(events, "_relay_after_commit", slow_relay)

    async def scenario() -> None:
        events.relay_soon()
        while not started.is_set():
            await asyncio.sleep(0.005)
        for _ in range(5):  # commits while the first relay runs
            events.relay_soon()
        while not _pump_done():
            await asyncio.sleep(0.01)

    asyncio.run(scenario())
    assert len(runs) == 2  # the first, and one more for everything committed while it ran
    assert all(name != threading.main_thread().name for name in runs)  # never in the loop's thread


def test_a_call_after_the_relay_finished_starts_a_new_one(monkeypatch: pytest.MonkeyPatch) -> None:
    runs: list[int] = []
    monkeypatch.setattr(events, "_relay_after_commit", lambda: runs.append(1))

    async def scenario() -> None:
        for _ in range(3):
            events.relay_soon()
            while not _pump_done():
                await asyncio.sleep(0.005)

    asyncio.run(scenario())
    assert len(runs) == 3


def test_a_failing_relay_leaves_the_pump_ready(monkeypatch: pytest.MonkeyPatch) -> None:
    """A relay that fails (its connection lost) is logged, and the next commit relays again."""
    runs: list[int] = []

    def failing() -> None:
        runs.append(1)
        if len(runs) == 1:
            raise RuntimeError("the database went away")

    monkeypatch.setattr(events, "_relay_after_commit", failing)

    async def scenario() -> None:
        events.relay_soon()
        while not _pump_done():
            await asyncio.sleep(0.005)
        events.relay_soon()
        while not _pump_done():
            await asyncio.sleep(0.005)

    asyncio.run(scenario())
    assert len(runs) == 2
