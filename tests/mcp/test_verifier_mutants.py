"""The bearer-token verifier's rules, each pinned at its edge: what a token verifies to, and how long."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from types import SimpleNamespace

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings
from mcp.server.auth.provider import AccessToken
from oauth2_provider.models import AccessToken as OAuthAccessToken

from accounts.connections import token_checksum
from accounts.models import User, Workspace
from tests.mcp.harness import agent_token
from weft.mcp import verifier
from weft.mcp.verifier import ConnectionTokenVerifier, VerifiedTokens, verify

FIXED_TOKEN = "weft-fixed-test-token-0123456789"


def _token(name: str = "t") -> AccessToken:
    return AccessToken(token=name, client_id="c", scopes=["mcp"])


class Clock:
    """time.monotonic for the cache, moved by hand; `on_read` runs once, inside the next reading."""

    def __init__(self, now: float) -> None:
        self.now = now
        self.on_read: Callable[[], object] | None = None

    def monotonic(self) -> float:
        hook, self.on_read = self.on_read, None
        if hook is not None:
            hook()
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    moved = Clock(1000.0)
    monkeypatch.setattr(verifier, "time", SimpleNamespace(monotonic=moved.monotonic))
    return moved


@pytest.mark.django_db(transaction=True)
def test_it_verifies_a_connection_token_to_its_client_scopes_expiry_user_connection_and_workspace(
    alice: User, ws_a: Workspace
):
    token, connection = agent_token(alice, ws_a)
    stored = OAuthAccessToken.objects.select_related("application").get(token_checksum=token_checksum(token))
    assert stored.application is not None
    assert verify(token) == AccessToken(
        token=token,
        client_id=stored.application.client_id,
        scopes=["mcp", "offline_access"],
        expires_at=int(stored.expires.timestamp()),
        resource=settings.WEFT_MCP_URL,
        subject=str(alice.pk),
        claims={"iss": settings.WEFT_BASE_URL, "connection_id": connection.pk, "workspace_id": ws_a.pk},
    )


@pytest.mark.django_db(transaction=True)
def test_the_configured_test_token_verifies_to_the_test_client_with_the_mcp_scope(settings):
    settings.WEFT_MCP_TEST_TOKEN = FIXED_TOKEN
    assert verify(FIXED_TOKEN) == AccessToken(
        token=FIXED_TOKEN, client_id="weft-test-token", scopes=["mcp"], resource=settings.WEFT_MCP_URL
    )


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "presented",
    [
        pytest.param("not-a-token", id="another token"),
        pytest.param(FIXED_TOKEN[:-1], id="a prefix of the test token"),
        pytest.param(FIXED_TOKEN + "0", id="the test token and more"),
    ],
)
def test_only_the_test_token_itself_passes_the_test_token_branch(settings, presented):
    settings.WEFT_MCP_TEST_TOKEN = FIXED_TOKEN
    assert verify(presented) is None


@pytest.mark.django_db(transaction=True)
def test_a_connection_token_keeps_its_own_claims_while_a_test_token_is_configured(
    settings, alice: User, ws_a: Workspace
):
    settings.WEFT_MCP_TEST_TOKEN = FIXED_TOKEN
    token, connection = agent_token(alice, ws_a)
    verified = verify(token)
    assert verified is not None and connection.application is not None
    assert (verified.client_id, verified.claims) == (
        connection.application.client_id,
        {"iss": settings.WEFT_BASE_URL, "connection_id": connection.pk, "workspace_id": ws_a.pk},
    )


@pytest.mark.parametrize(
    ("age", "kept"),
    [
        pytest.param(29.999, True, id="just before its 30 seconds end"),
        pytest.param(30.0, False, id="when its 30 seconds end"),
    ],
)
def test_a_verified_token_is_kept_for_30_seconds(clock: Clock, age: float, kept: bool):
    cache = VerifiedTokens()
    verified = _token()
    cache.put("sum", verified, cache.generation)
    clock.now += age
    assert cache.get("sum") == (verified if kept else None)


def test_two_requests_that_find_the_same_expired_entry_are_both_refused(clock: Clock):
    cache = VerifiedTokens(ttl=30.0)
    cache.put("sum", _token(), cache.generation)
    clock.now += 31.0
    other_request: list[AccessToken | None] = []
    # The other request reads and drops the entry between this one's read and its own drop.
    clock.on_read = lambda: other_request.append(cache.get("sum"))
    assert cache.get("sum") is None
    assert other_request == [None]


def test_a_full_cache_drops_an_entry_expiring_now_before_it_evicts_a_live_one(clock: Clock):
    cache = VerifiedTokens(ttl=30.0, max_entries=3)
    live, ending = _token("live"), _token("ending")
    cache.put("live", live, cache.generation)  # expires at +30
    clock.now += 5.0
    cache.put("ending", ending, cache.generation)  # expires at +35
    clock.now += 15.0
    cache.put("live", live, cache.generation)  # verified again: +50, still first in line
    cache.put("other", _token("other"), cache.generation)  # the cache is full
    clock.now += 15.0  # +35: "ending" ends now
    cache.put("new", _token("new"), cache.generation)
    assert [cache.get(name) for name in ("live", "ending")] == [live, None]
    assert cache.get("new") is not None and cache.get("other") is not None


def test_a_lookup_that_began_between_two_revocations_is_not_kept():
    cache = VerifiedTokens()
    cache.clear()
    generation = cache.generation  # the lookup begins after one revocation
    cache.clear()  # and a second lands while it is in flight
    cache.put("sum", _token(), generation)
    assert cache.get("sum") is None


def test_a_lookup_that_began_after_the_last_revocation_is_kept():
    cache = VerifiedTokens()
    cache.clear()
    cache.clear()
    verified = _token()
    cache.put("sum", verified, cache.generation)
    assert cache.get("sum") == verified


def test_a_token_lookup_does_not_wait_behind_the_shared_sync_thread(monkeypatch: pytest.MonkeyPatch):
    """Django's thread-sensitive work shares one thread; a slow call there must not hold up authentication."""
    verified = _token("live")
    monkeypatch.setattr(verifier, "verify", lambda _: verified)

    async def verify_while_the_shared_thread_is_busy() -> AccessToken | None:
        holding, release = threading.Event(), threading.Event()

        def hold_the_shared_thread() -> None:
            holding.set()
            release.wait(timeout=30)

        held = asyncio.ensure_future(sync_to_async(hold_the_shared_thread, thread_sensitive=True)())
        try:
            await asyncio.get_running_loop().run_in_executor(None, holding.wait, 30)
            return await asyncio.wait_for(ConnectionTokenVerifier().verify_token("live"), timeout=5)
        finally:
            release.set()
            await held

    assert asyncio.run(verify_while_the_shared_thread_is_busy()) == verified
