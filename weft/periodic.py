"""The embedded default's timer: runs the Celery beat schedule inside the server process.

With no Redis there is no beat and no worker, so the ASGI lifespan starts this loop and
calls each scheduled task (the settings' beat schedule and the event log's) in a worker
thread at its interval. Each task runs on its own: a slow run (a round of webhook deliveries
waiting on a hanging receiver) holds back no other task, and a task still running when it is
due again is not started twice. On stop the loop waits for the runs in flight. In production
Celery beat does the same work and this loop is off (WEFT_EMBEDDED_TIMER).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from functools import partial
from typing import Any

from asgiref.sync import sync_to_async
from celery import current_app
from django.conf import settings
from django.db import close_old_connections

from weft.celery import EVENT_LOG_SCHEDULE

log = logging.getLogger(__name__)


def _run_task(name: str) -> None:
    close_old_connections()
    try:
        current_app.tasks[name].apply()
    finally:
        close_old_connections()


async def _run_in_thread(name: str) -> None:
    try:
        await sync_to_async(_run_task, thread_sensitive=False)(name)
    except Exception:
        log.exception("periodic task %s failed", name)


def _finished(running: dict[str, asyncio.Task[None]], name: str, _: asyncio.Task[None]) -> None:
    running.pop(name, None)


async def embedded_timer(stop: asyncio.Event, *, tick: float = 1.0) -> None:
    schedule: dict[str, dict[str, Any]] = {**settings.CELERY_BEAT_SCHEDULE, **EVENT_LOG_SCHEDULE}
    last: dict[str, float] = {}
    running: dict[str, asyncio.Task[None]] = {}
    current_app.loader.import_default_modules()  # the apps' tasks modules: no worker imports them here
    while not stop.is_set():
        now = time.monotonic()
        for entry in schedule.values():
            name, every = entry["task"], float(entry["schedule"])
            if now - last.get(name, 0.0) < every or name in running:
                continue
            last[name] = now
            if name in current_app.tasks:
                running[name] = asyncio.create_task(_run_in_thread(name), name=f"periodic {name}")
                running[name].add_done_callback(partial(_finished, running, name))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=tick)
    if running:
        await asyncio.wait(list(running.values()))
