"""Schemathesis against /api/v1/schema/: every operation, with generated arguments, authenticated in
a seeded workspace, answers without a 5xx and as its schema says (status, content type, body)."""

from __future__ import annotations

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, given, settings
from schemathesis.generation.modes import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)

from accounts.models import Plan
from tests.mcp.harness import agent_token

CHECKS = [
    schemathesis.checks.not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    negative_data_rejection,
]


@pytest.fixture
def seeded(db, alice, ws_a, public_dns) -> str:
    """A workspace on Pro (no monthly call cap) with tasks, a held run and a subscription."""
    from django.test import Client

    from tests.api.conftest import Api

    ws_a.plan = Plan.named("pro")
    ws_a.save(update_fields=["plan"])
    token, _ = agent_token(alice, ws_a)
    api = Api(Client(), token)
    ids = [
        api.post("tasks", {"title": f"Seeded task {n}", "description": "seeded"}).body["task"]["id"]
        for n in range(3)
    ]
    assert api.post(f"tasks/{ids[0]}/start").status == 200
    api.post("subscriptions", {"url": "https://hooks.example.com/seed", "eventTypes": ["task.created"]})
    return token


@pytest.fixture
def in_test_transaction():
    """Django's test client keeps the request signals from closing the test's database connection;
    schemathesis calls the WSGI app directly, so do the same for it."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


def test_the_api_keeps_its_schema(seeded, in_test_transaction):
    from weft.wsgi import application

    api_schema = schemathesis.openapi.from_wsgi("/api/v1/schema/?format=json", application)
    operations = [result.ok() for result in api_schema.get_all_operations()]  # type: ignore[union-attr]
    assert len(operations) >= 18
    headers = {"Authorization": f"Bearer {seeded}"}
    for operation, mode in [(op, mode) for op in operations for mode in GenerationMode]:

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
        def run(case):
            case.call_and_validate(headers=headers, checks=CHECKS)

        run()
