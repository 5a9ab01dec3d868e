"""OAuth tokens at rest: the database holds checksums only; refresh, replay and revocation still work."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import time_machine
from django.core import management
from django.db import connection
from django.test import Client
from django.utils import timezone
from oauth2_provider.models import AccessToken, RefreshToken
from oauth2_provider.settings import oauth2_settings

from accounts.oauth_tokens import stored_checksum
from tests.mcp.harness import MCP, in_process
from tests.oauth.test_flow import _refresh, _tokens


def _all_token_text() -> str:
    """Every column of both token tables, as one string (what a database dump would show)."""
    with connection.cursor() as cursor:
        rows: list[tuple[object, ...]] = []
        for table in (AccessToken._meta.db_table, RefreshToken._meta.db_table):
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
            rows.extend(cursor.fetchall())
    return "\n".join(repr(row) for row in rows)


def test_it_stores_neither_raw_token(db, alice, ws_a):
    _, body = _tokens(Client(), alice, ws_a)
    dump = _all_token_text()
    assert body["access_token"] not in dump
    assert body["refresh_token"] not in dump
    access = AccessToken.objects.get(token_checksum=stored_checksum(body["access_token"]))
    assert access.token == ""
    refresh = RefreshToken.objects.get(token_checksum=stored_checksum(body["refresh_token"]))
    assert refresh.token == "" and refresh.access_token == access


def test_it_stores_neither_raw_token_after_a_refresh_and_a_replay(db, alice, ws_a):
    client_id, first = _tokens(Client(), alice, ws_a)
    with time_machine.travel(timezone.now(), tick=False):
        second = _refresh(client_id, first["refresh_token"]).json()
        replay = _refresh(client_id, first["refresh_token"]).json()
    pair = ("access_token", "refresh_token")
    assert [replay[k] for k in pair] == [second[k] for k in pair]
    dump = _all_token_text()
    for raw in [first[k] for k in pair] + [second[k] for k in pair]:
        assert raw not in dump


def test_it_serves_the_mcp_endpoint_with_a_token_found_by_its_hash(transactional_db, alice, ws_a):
    _, body = _tokens(Client(), alice, ws_a)

    async def call() -> int:
        async with in_process() as client:
            return (await MCP(client, body["access_token"]).post("tools/list", None)).status_code

    assert asyncio.run(call()) == 200


def test_it_revokes_an_access_token_and_its_refresh_token(db, alice, ws_a):
    client_id, body = _tokens(Client(), alice, ws_a)
    response = Client().post(
        "/o/revoke_token/",
        {"token": body["access_token"], "token_type_hint": "access_token", "client_id": client_id},
    )
    assert response.status_code == 200
    assert not AccessToken.objects.filter(token_checksum=stored_checksum(body["access_token"])).exists()
    assert _refresh(client_id, body["refresh_token"]).json()["error"] == "invalid_grant"


def test_it_revokes_a_refresh_token_for_good(db, alice, ws_a):
    client_id, body = _tokens(Client(), alice, ws_a)
    response = Client().post(
        "/o/revoke_token/",
        {"token": body["refresh_token"], "token_type_hint": "refresh_token", "client_id": client_id},
    )
    assert response.status_code == 200
    # A revoked (not rotated) refresh token gets no grace, not even within the window.
    assert _refresh(client_id, body["refresh_token"]).json()["error"] == "invalid_grant"


def test_it_refuses_a_replay_after_the_window_and_revokes_the_family(db, alice, ws_a):
    client_id, first = _tokens(Client(), alice, ws_a)
    start = timezone.now()
    after_window = start + timedelta(seconds=oauth2_settings.REFRESH_TOKEN_GRACE_PERIOD_SECONDS + 1)
    with time_machine.travel(start, tick=False):
        second = _refresh(client_id, first["refresh_token"]).json()
    with time_machine.travel(after_window, tick=False):
        assert _refresh(client_id, first["refresh_token"]).json()["error"] == "invalid_grant"
        assert _refresh(client_id, second["refresh_token"]).json()["error"] == "invalid_grant"
    assert not AccessToken.objects.filter(token_checksum=stored_checksum(second["access_token"])).exists()


def test_it_passes_the_deploy_checks_with_hashed_tokens_and_a_grace_window(db):
    """DOT's E001 is silenced on purpose: the grace window works from derived tokens."""
    management.call_command("check", "--fail-level", "ERROR")
