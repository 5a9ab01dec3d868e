"""The verified-token cache on the REST API's path (`verify_in_request`): the same entries as
MCP's, filled once, read without the database, kept out after a clear, and a cached token past
its expiry refused from its expiry second on."""

from __future__ import annotations

import time

import pytest
import time_machine
from mcp.server.auth.provider import AccessToken

from accounts.connections import token_checksum
from tests.mcp.harness import agent_token
from weft.mcp import verifier
from weft.mcp.verifier import verified_tokens, verify_in_request

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def empty_cache():
    verified_tokens.clear()
    yield
    verified_tokens.clear()


def test_a_verified_token_is_cached_under_its_checksum_and_then_read_without_the_database(
    alice, ws_a, monkeypatch
):
    token, _ = agent_token(alice, ws_a)
    first = verify_in_request(token)
    assert first is not None
    assert verified_tokens.get(token_checksum(token)) == first

    def no_database(_: str) -> None:
        raise AssertionError("a cached token went to the database")

    monkeypatch.setattr(verifier, "_verified", no_database)
    assert verify_in_request(token) == first


def test_an_unknown_token_is_not_cached(ws_a):
    assert verify_in_request("not-a-token") is None
    assert verified_tokens.get(token_checksum("not-a-token")) is None


def test_a_lookup_that_began_before_a_clear_is_not_kept(alice, ws_a, monkeypatch):
    token, _ = agent_token(alice, ws_a)
    real = verifier._verified

    def cleared_meanwhile(presented: str):
        found = real(presented)
        verified_tokens.clear()  # a revocation lands while the lookup runs
        return found

    monkeypatch.setattr(verifier, "_verified", cleared_meanwhile)
    assert verify_in_request(token) is not None
    assert verified_tokens.get(token_checksum(token)) is None


@pytest.mark.parametrize(("offset", "live"), [(0, True), (-1, False), (60, True)])
def test_a_cached_token_is_refused_once_its_expiry_second_has_passed(offset, live):
    now = int(time.time())
    cached = AccessToken(token="t", client_id="c", scopes=["mcp"], expires_at=now + offset)
    verified_tokens.put(token_checksum("t"), cached, verified_tokens.generation)
    with time_machine.travel(now, tick=False):  # the clock stays in the expiry's second
        assert (verify_in_request("t") is not None) is live


def test_a_cached_token_without_expiry_stays_live():
    cached = AccessToken(token="u", client_id="c", scopes=["mcp"], expires_at=None)
    verified_tokens.put(token_checksum("u"), cached, verified_tokens.generation)
    assert verify_in_request("u") == cached
