"""Client registration is rate-limited per address, counted in the database for every process."""

from __future__ import annotations

from datetime import timedelta

import time_machine
from django.core.cache import cache
from django.test import Client
from django.utils import timezone

from accounts.oauth_ratelimit import RateWindow, rate_hit
from tests.boards.helpers import race

BODY = {"client_name": "x", "redirect_uris": ["http://localhost/cb"], "token_endpoint_auth_method": "none"}
HOUR = timedelta(hours=1)


def _register(address: str = "203.0.113.7", path: str = "/o/register/") -> int:
    return Client(REMOTE_ADDR=address).post(path, BODY, content_type="application/json").status_code


def test_it_allows_exactly_the_limit_then_refuses(db, settings):
    settings.WEFT_DCR_RATE_PER_HOUR = 3
    assert [_register() for _ in range(3)] == [201, 201, 201]
    response = Client(REMOTE_ADDR="203.0.113.7").post("/o/register/", BODY, content_type="application/json")
    assert response.status_code == 429
    assert response.json()["error"] == "invalid_client_metadata"
    assert 3500 < int(response["Retry-After"]) <= 3600


def test_it_counts_each_address_on_its_own(db, settings):
    settings.WEFT_DCR_RATE_PER_HOUR = 1
    assert _register("203.0.113.7") == 201
    assert _register("203.0.113.8") == 201
    assert _register("203.0.113.7") == 429


def test_it_keeps_the_count_when_process_state_is_gone(db, settings):
    """Nothing lives in the process: a cleared cache (another worker, a restart) still refuses."""
    settings.WEFT_DCR_RATE_PER_HOUR = 2
    assert [_register(), _register()] == [201, 201]
    cache.clear()
    assert _register() == 429
    assert RateWindow.objects.get(key="dcr:203.0.113.7").count == 2


def test_it_counts_the_root_alias_with_the_discovered_endpoint(db, settings):
    settings.WEFT_DCR_RATE_PER_HOUR = 2
    assert _register(path="/o/register/") == 201
    assert _register(path="/register") == 201
    assert _register(path="/o/register/") == 429


def test_it_counts_refused_registrations_too(db, settings):
    settings.WEFT_DCR_RATE_PER_HOUR = 1
    bad = {**BODY, "redirect_uris": ["http://evil.example/cb"]}
    assert Client().post("/o/register/", bad, content_type="application/json").status_code == 400
    assert _register("127.0.0.1") == 429


def test_it_starts_a_new_window_after_an_hour(db):
    start = timezone.now()
    assert rate_hit(key="k", limit=2, window=HOUR, now=start) is None
    assert rate_hit(key="k", limit=2, window=HOUR, now=start + timedelta(minutes=1)) is None
    assert rate_hit(key="k", limit=2, window=HOUR, now=start + timedelta(minutes=59)) == 60
    assert rate_hit(key="k", limit=2, window=HOUR, now=start + HOUR) is None
    assert rate_hit(key="k", limit=2, window=HOUR, now=start + HOUR + timedelta(seconds=1)) is None
    assert rate_hit(key="k", limit=2, window=HOUR, now=start + HOUR + timedelta(seconds=2)) is not None


def test_it_forgets_ended_windows_of_other_keys(db):
    start = timezone.now()
    rate_hit(key="old", limit=5, window=HOUR, now=start)
    rate_hit(key="new", limit=5, window=HOUR, now=start + 2 * HOUR)
    assert list(RateWindow.objects.values_list("key", flat=True)) == ["new"]


def test_it_refuses_everything_with_a_zero_limit(db):
    assert rate_hit(key="k", limit=0, window=HOUR) == 3600


def test_it_lets_exactly_the_limit_through_concurrent_processes(transactional_db, on_postgres):
    """Separate connections stand in for separate processes: the row is the only shared state."""
    with time_machine.travel(timezone.now(), tick=False):
        outcomes = race(range(12), lambda _: rate_hit(key="dcr:race", limit=5, window=HOUR))
    assert sum(outcome is None for outcome in outcomes) == 5
    assert all(outcome is None or isinstance(outcome, int) for outcome in outcomes)
    assert RateWindow.objects.get(key="dcr:race").count == 5
