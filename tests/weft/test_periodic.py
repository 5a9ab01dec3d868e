"""The embedded default's timer runs the beat schedule inside the server process."""

from __future__ import annotations

import asyncio
import threading

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


@shared_task(name="tests.periodic.slow")
def slow() -> None:
    calls.append("slow started")
    release.wait(10)


release = threading.Event()


@pytest.mark.django_db(transaction=True)
async def test_a_slow_task_holds_back_no_other_and_is_not_started_twice(settings):
    calls.clear()
    release.clear()
    settings.CELERY_BEAT_SCHEDULE = {
        "slow": {"task": "tests.periodic.slow", "schedule": 0.05},
        "record": {"task": "tests.periodic.record", "schedule": 0.05},
    }
    stop = asyncio.Event()
    timer = asyncio.create_task(periodic.embedded_timer(stop, tick=0.05))
    deadline = asyncio.get_running_loop().time() + 5
    while calls.count("ran") < 5 and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.02)
    assert calls.count("ran") >= 5, "the other task waited for the slow one"
    assert calls.count("slow started") == 1, "a task still running was started again"
    stop.set()
    release.set()
    await asyncio.wait_for(timer, timeout=5)
