"""Celery app: sweeps, reminders and deliveries. Eager in the embedded default."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "weft.settings")

app = Celery("weft")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
