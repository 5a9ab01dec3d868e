"""Two requests racing with one Idempotency-Key on PostgreSQL: the write runs once."""

from __future__ import annotations

import threading

import pytest
from django.db import connection
from django.test import Client

from boards.models import Task
from tests.api.conftest import Api

pytestmark = pytest.mark.django_db(transaction=True)


def test_racing_requests_with_one_key_write_once(on_postgres, api):
    statuses: list[int] = []
    barrier = threading.Barrier(4)

    def send() -> None:
        try:
            barrier.wait()
            racer = Api(Client(), api.token)
            answer = racer.post("tasks", {"title": "Race"}, headers={"Idempotency-Key": "race"})
            statuses.append(answer.status)
        finally:
            connection.close()

    threads = [threading.Thread(target=send) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert Task.objects.filter(title="Race").count() == 1
    # The first answers 201; the others replay it, or hear that it still runs.
    assert statuses.count(201) >= 1 and set(statuses) <= {201, 409}, statuses
