"""Celery app: sweeps, reminders and deliveries. Eager in the embedded default."""

import os
from typing import Any

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "weft.settings")

app = Celery("weft")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# The event log's periodic work, added to the settings' beat schedule (and to the embedded
# timer's): the relay's backstop for a process that died between commit and relay, and the
# daily retention trim.
EVENT_LOG_SCHEDULE: dict[str, dict[str, Any]] = {
    "event-relay": {"task": "weft.events.relay", "schedule": 5.0},
    "event-trim": {"task": "weft.events.trim", "schedule": 86400.0},
}


@app.on_after_configure.connect
def _schedule_event_log(sender: Celery, **kwargs: Any) -> None:
    for name, entry in EVENT_LOG_SCHEDULE.items():
        sender.add_periodic_task(entry["schedule"], sender.signature(entry["task"]), name=name)


# This module loads with the settings, before the apps: the tasks import the log when they run.
@app.task(name="weft.events.relay")
def relay_events() -> int:
    """Every 5 s: position committed events whose writer's own relay never ran."""
    from weft.events import relay

    return len(relay())


@app.task(name="weft.events.trim")
def trim_events() -> int:
    """Daily: events older than retention leave the log."""
    from weft.events import trim

    return trim()
