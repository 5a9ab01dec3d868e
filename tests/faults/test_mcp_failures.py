"""Failures nobody planned for still answer inside the hint contract on MCP."""

from __future__ import annotations

import logging
from typing import Any

import psycopg
import psycopg_pool
import pytest
from django.db import InterfaceError, OperationalError

from tests.mcp.harness import agent_token
from weft.hints import problems
from weft.mcp.server import _run_for_connection

# Transactional: the wrapper closes old connections, which would end a test-wrapping transaction.
pytestmark = pytest.mark.django_db(transaction=True)


def _raising(exc: BaseException) -> Any:
    def fn(connection: Any) -> Any:
        raise exc

    return fn


def _checked(result: Any, code: str) -> dict[str, Any]:
    text = "\n".join(block.text for block in result.content)
    assert result.is_error, text
    assert result.structured_content["error"]["code"] == code, text
    assert not problems(text, result.structured_content), (problems(text, result.structured_content), text)
    assert result.structured_content["_next_action"].startswith("Wait: "), text
    return result.structured_content


@pytest.mark.parametrize(
    "exc",
    [
        OperationalError("server closed the connection unexpectedly"),
        InterfaceError("connection already closed"),
        psycopg.OperationalError("consuming input failed"),
        psycopg_pool.PoolTimeout("couldn't get a connection after 10.00 sec"),
    ],
    ids=["django-operational", "django-interface", "psycopg-operational", "pool-timeout"],
)
def test_it_answers_unavailable_when_the_database_is_lost(alice, ws_a, exc):
    _, connection = agent_token(alice, ws_a)
    payload = _checked(_run_for_connection(_raising(exc), connection.pk), "unavailable")
    assert payload["_next_action"].startswith("Wait: the database is reachable again")


def test_it_answers_internal_error_with_a_logged_request_id(alice, ws_a, caplog):
    _, connection = agent_token(alice, ws_a)
    with caplog.at_level(logging.ERROR, logger="weft.mcp.failures"):
        result = _run_for_connection(_raising(KeyError("surprise")), connection.pk)
    payload = _checked(result, "internal_error")
    request_id = payload["error"]["details"]["request_id"]
    assert len(request_id) == 32 and request_id in payload["error"]["message"]
    logged = [r for r in caplog.records if request_id in r.getMessage()]
    assert logged and logged[0].exc_info is not None and "surprise" in str(logged[0].exc_info[1])


def test_it_keeps_weft_errors_as_they_were(alice, ws_a):
    from weft.errors import not_found

    _, connection = agent_token(alice, ws_a)
    refused = _run_for_connection(_raising(not_found("task", 9)), connection.pk)
    assert refused.structured_content["error"]["code"] == "not_found"


def test_it_maps_the_codes_to_http_statuses():
    from weft.errors import HTTP_STATUS, internal_error, unavailable

    assert unavailable("the database").http_status == 503 == HTTP_STATUS["unavailable"]
    assert internal_error("abc").http_status == 500 == HTTP_STATUS["internal_error"]
