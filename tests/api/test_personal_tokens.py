"""REST calls with a person's access token: refused with 401 like an OAuth token when unknown,
revoked, expired or seatless; scoped to its workspace; rate limited per token; metered."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
import time_machine
from django.test import Client
from django.utils import timezone

from accounts.connections import connection_revoke
from accounts.models import PersonalAccessToken, Seat, Usage
from accounts.tokens import pat_create, pat_revoke
from boards.services import board_default, task_create
from tests.api.conftest import Api
from tests.api.test_auth import _refused

pytestmark = pytest.mark.django_db


def _token(user, workspace, *, days: int | None = None):
    seat = Seat.objects.select_related("workspace", "user").get(user=user, workspace=workspace)
    created = pat_create(seat=seat, name="CI", expires_in_days=days)
    return created, Api(Client(), created.secret)


@pytest.fixture
def pat(alice, ws_a):
    return _token(alice, ws_a)


def test_it_calls_the_api_as_its_own_connection(pat, ws_a):
    created, api = pat
    answer = api.post("tasks", {"title": "From CI"})
    assert answer.status == 201, answer.body
    assert created.token.connection.workspace_id == ws_a.pk
    assert created.token.connection.name == "Token: CI"


def test_an_unknown_token(db):
    _refused(Api(Client(), PersonalAccessToken.PREFIX + "0" * 48).get("work"))


def test_a_revoked_token(pat):
    created, api = pat
    assert api.get("work").status == 200
    pat_revoke(token=created.token)
    _refused(api.get("work"))


def test_a_token_whose_connection_was_revoked(pat):
    created, api = pat
    connection_revoke(connection=created.token.connection)
    created.token.refresh_from_db()
    assert created.token.revoked_at is not None
    _refused(api.get("work"))


def test_an_expired_token(alice, ws_a):
    created, api = _token(alice, ws_a, days=7)
    with time_machine.travel(created.token.expires_at - timedelta(seconds=1)):
        assert api.get("work").status == 200
    with time_machine.travel(created.token.expires_at + timedelta(seconds=1)):
        _refused(api.get("work"))


def test_a_lost_seat(bob, ws_a):
    _, api = _token(bob, ws_a)
    assert api.get("work").status == 200
    Seat.objects.filter(user=bob, workspace=ws_a).delete()
    _refused(api.get("work"))


def test_a_foreign_object_answers_like_a_missing_one(alice, ws_a, carol, ws_b):
    task = task_create(workspace=ws_a, title="A's", board=board_default(workspace=ws_a), by_user=alice).task
    _, api = _token(carol, ws_b)
    foreign, missing = api.get(f"tasks/{task.pk}"), api.get("tasks/987654321")
    assert foreign.status == missing.status == 404
    assert foreign.body["error"]["code"] == "not_found"
    assert json.dumps(foreign.body) == json.dumps(missing.body).replace("987654321", str(task.pk))


def test_every_call_is_metered_as_an_agent_call(pat, ws_a):
    _, api = pat
    api.get("work")
    api.post("tasks", {"title": "Counted"})
    assert Usage.objects.get(workspace=ws_a, kind=Usage.AGENT_CALLS).count == 2


def test_the_rate_limit_holds_at_its_edge(pat, settings):
    settings.WEFT_PAT_RATE_PER_MINUTE = 3
    _, api = pat
    with time_machine.travel(timezone.now(), tick=False):
        assert [api.get("work").status for _ in range(3)] == [200, 200, 200]
        refused = api.get("work")
    assert refused.status == 429 and refused.body["error"]["code"] == "rate_limited"
    assert refused.headers["Retry-After"] == "60"  # the clock stood still: the whole window is left
    assert refused.body["error"]["message"].endswith("reached its limit of 3 calls a minute")
    assert refused.body["_next_action"] == "Wait: 60 seconds pass; check again with GET /api/v1/work"


def test_the_default_rate_is_120_a_minute(pat):
    _, api = pat
    with time_machine.travel(timezone.now(), tick=False):
        statuses = [api.get("work").status for _ in range(121)]
    assert statuses[:120] == [200] * 120 and statuses[120] == 429


def test_the_rate_window_ends_after_a_minute(pat, settings):
    settings.WEFT_PAT_RATE_PER_MINUTE = 1
    _, api = pat
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        assert api.get("work").status == 200
        assert api.get("work").status == 429
    with time_machine.travel(start + timedelta(seconds=61), tick=False):
        assert api.get("work").status == 200


def test_each_token_has_its_own_rate(alice, ws_a, settings):
    settings.WEFT_PAT_RATE_PER_MINUTE = 1
    (_, first), (_, second) = _token(alice, ws_a), _token(alice, ws_a)
    assert first.get("work").status == 200
    assert second.get("work").status == 200
    assert first.get("work").status == 429


def test_last_used_is_written_at_most_once_a_minute(pat):
    created, api = pat
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        api.get("work")
    created.token.refresh_from_db()
    assert created.token.last_used_at == start
    with time_machine.travel(start + timedelta(seconds=30), tick=False):
        api.get("work")
    created.token.refresh_from_db()
    assert created.token.last_used_at == start
    with time_machine.travel(start + timedelta(seconds=61), tick=False):
        api.get("work")
    created.token.refresh_from_db()
    assert created.token.last_used_at == start + timedelta(seconds=61)
    created.token.connection.refresh_from_db()
    assert created.token.connection.last_used_at == created.token.last_used_at


def test_an_oauth_token_is_not_rate_limited(api, settings):
    settings.WEFT_PAT_RATE_PER_MINUTE = 1
    assert [api.get("work").status for _ in range(3)] == [200, 200, 200]


def test_a_warm_token_costs_two_queries_more_than_an_oauth_token(pat, django_assert_num_queries):
    """The token's SELECT (with its seat and connection) and the rate's UPDATE; last_used_at is not
    written again within the minute."""
    from django.db import connection

    from tests.api.test_query_counts import OVERHEAD

    _, api = pat
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        api.get("work")
    queries = 2 + OVERHEAD + 1 + (connection.vendor == "postgresql")
    with time_machine.travel(start + timedelta(seconds=5), tick=False), django_assert_num_queries(queries):
        assert api.get("board").status == 200
