"""On the embedded default the server's own timer sends the deliveries: no worker, nothing inline."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest
from asgiref.sync import sync_to_async

from accounts.models import Seat
from boards.services import task_create
from hooks.models import Delivery
from hooks.services import subscription_create
from weft import periodic

ENTRY = "webhook-deliveries"


def test_the_beat_schedule_sends_due_deliveries_every_few_seconds(settings):
    entry = settings.CELERY_BEAT_SCHEDULE[ENTRY]
    assert entry["task"] == "hooks.deliver_due" and entry["schedule"] <= 10


def test_the_embedded_timer_registers_the_apps_tasks_it_schedules():
    # A fresh server process: nothing has imported any app's tasks module yet.
    script = (
        "import asyncio, os, django; os.environ['WEFT_DEBUG'] = '1'; django.setup();"
        "from celery import current_app; from weft import periodic;"
        "stop = asyncio.Event(); stop.set();"
        "asyncio.run(periodic.embedded_timer(stop));"
        "print(sorted(t for t in current_app.tasks if not t.startswith('celery.')))"
    )
    env = {"DJANGO_SETTINGS_MODULE": "weft.settings", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    assert "'hooks.deliver_due'" in out.stdout and "'boards.tasks.sweep_leases'" in out.stdout, out


@pytest.mark.django_db(transaction=True)
async def test_a_write_reaches_the_receiver_through_the_timer(settings, ws_a, alice, receiver):
    settings.DEBUG = True
    settings.CELERY_BEAT_SCHEDULE = {ENTRY: {**settings.CELERY_BEAT_SCHEDULE[ENTRY], "schedule": 0.05}}

    def write() -> None:
        seat = Seat.objects.select_related("workspace", "user").get(workspace=ws_a, user=alice)
        subscription_create(workspace=ws_a, url=receiver.url, event_types=["task.created"], by_seat=seat)
        task_create(workspace=ws_a, title="Through the timer", by_user=alice)

    await sync_to_async(write)()
    assert receiver.received == [], "nothing is sent in the request that wrote the event"
    stop = asyncio.Event()
    timer = asyncio.create_task(periodic.embedded_timer(stop, tick=0.05))
    deadline = asyncio.get_running_loop().time() + 10
    while not receiver.received and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.05)
    stop.set()
    await asyncio.wait_for(timer, timeout=10)
    assert [r.json["type"] for r in receiver.received] == ["task.created"]
    states = await sync_to_async(lambda: list(Delivery.objects.values_list("state", flat=True)))()
    assert states == [Delivery.DELIVERED]
