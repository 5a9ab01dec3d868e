"""The embedded default's timer runs the beat schedule inside the server process."""

from __future__ import annotations

import asyncio

import pytest
from celery import shared_task

from weft import periodic

calls: list[str] = []


@shared_task(name="tests.periodic.record")
def record() -> None:
    calls.append("ran")


@shared_task(name="tests.periodic.boom")
def boom() -> None:
    raise RuntimeError("a failing periodic task must not stop the timer")


@pytest.mark.django_db(transaction=True)
async def test_it_runs_each_scheduled_task_at_its_interval(settings):
    calls.clear()
    settings.CELERY_BEAT_SCHEDULE = {
        "boom": {"task": "tests.periodic.boom", "schedule": 0.05},
        "record": {"task": "tests.periodic.record", "schedule": 0.05},
        "missing": {"task": "tests.periodic.not_registered", "schedule": 0.05},
    }
    stop = asyncio.Event()
    timer = asyncio.create_task(periodic.embedded_timer(stop, tick=0.05))
    # Wait for the loop itself (it runs in real time), with a deadline rather than a fixed pause.
    deadline = asyncio.get_running_loop().time() + 5
    while len(calls) < 3 and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.02)
    stop.set()
    await asyncio.wait_for(timer, timeout=5)
    assert len(calls) >= 3


@pytest.mark.django_db(transaction=True)
async def test_it_stops_at_once_when_asked(settings):
    settings.CELERY_BEAT_SCHEDULE = {"record": {"task": "tests.periodic.record", "schedule": 3600}}
    stop = asyncio.Event()
    timer = asyncio.create_task(periodic.embedded_timer(stop, tick=30))
    await asyncio.sleep(0.1)
    stop.set()
    await asyncio.wait_for(timer, timeout=2)
