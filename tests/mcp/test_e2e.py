"""End to end: Weft under uvicorn on PostgreSQL, the official MCP client signing in with OAuth.

Discovery → registration → sign-in → consent → tokens, then the claim loop with a person
answering and accepting in between, refusals, and a refresh after the access token expires.
The server runs against pytest-django's test database, so the test is transactional.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from datetime import timedelta
from html import unescape
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx
import httpx2
import pytest
from django.db import connection as db
from django.db.models import F
from django.utils import timezone
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from oauth2_provider.models import AccessToken, RefreshToken
from oauth2_provider.settings import oauth2_settings
from pydantic import AnyUrl

from boards.models import InboxItem, Question
from boards.services import inbox_decide, question_answer, task_create
from tests.conftest import PASSWORD
from tests.mcp.harness import agent_token
from tests.mcp.server_process import uvicorn_server
from weft.hints import problems

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
REDIRECT = "http://localhost:53682/callback"
MCP_HEADERS = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18"}


class Memory:
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


def _hidden_fields(html: str) -> dict[str, str]:
    fields = {}
    for tag in re.findall(r"<input[^>]*>", html):
        name = re.search(r'name="([^"]+)"', tag)
        value = re.search(r'value="([^"]*)"', tag)
        if name:
            fields[name.group(1)] = unescape(value.group(1)) if value else ""
    return fields


class Person:
    """Drives sign-in and consent in the browser's place, as alice."""

    def __init__(self, base: str, email: str, workspace_slug: str) -> None:
        self.base = base
        self.email = email
        self.slug = workspace_slug
        self.result: AuthorizationCodeResult | None = None

    def sign_in_and_consent(self, authorization_url: str) -> None:
        with httpx.Client(base_url=self.base, follow_redirects=False, timeout=30) as web:
            response = web.get(authorization_url)
            assert response.status_code == 302 and "/accounts/login/" in response.headers["location"]
            login_url = urljoin(self.base, response.headers["location"])
            page = web.get(login_url)
            fields = _hidden_fields(page.text)
            fields.update(login=self.email, password=PASSWORD)
            response = web.post(login_url, data=fields, headers={"referer": login_url})
            assert response.status_code == 302, re.findall(
                r"(?:errorlist|message--error)[^<]*<[^>]*>[^<]*", response.text
            )
            consent_url = urljoin(self.base, response.headers["location"])
            assert "/o/authorize/" in consent_url
            page = web.get(consent_url)
            assert page.status_code == 200, page.text[:2000]
            assert "Weft e2e agent" in page.text and "localhost" in page.text
            fields = _hidden_fields(page.text)
            fields.update(allow="Authorize", workspace=self.slug)
            response = web.post(consent_url, data=fields, headers={"referer": consent_url})
            assert response.status_code == 302, re.findall(
                r"(?:errorlist|message--error)[^<]*<[^>]*>[^<]*", response.text
            )
            location = response.headers["location"]
            assert location.startswith(REDIRECT)
            query = parse_qs(urlsplit(location).query)
            self.result = AuthorizationCodeResult(
                code=query["code"][0], state=query.get("state", [None])[0], iss=query.get("iss", [None])[0]
            )


@pytest.fixture
def weft(on_postgres):
    settings_dict = db.settings_dict
    url = (
        f"postgresql://{settings_dict['USER']}@{settings_dict['HOST']}:{settings_dict['PORT']}/"
        f"{settings_dict['NAME']}"
    )
    # WEFT_TESTING: the test users' passwords use the test hasher.
    with uvicorn_server({"DATABASE_URL": url, "WEFT_TESTING": "1"}) as base:
        yield base


async def in_thread[T](fn: Callable[[], T]) -> T:
    """Run a database call in a worker thread and close that thread's connection after it.

    A connection left open in a pool thread keeps the test database busy at teardown.
    """

    def run() -> T:
        try:
            return fn()
        finally:
            db.close()

    return await asyncio.to_thread(run)


def _ok(result: Any) -> dict[str, Any]:
    text = "\n".join(block.text for block in result.content if block.type == "text")
    assert not result.is_error, text
    assert not problems(text, result.structured_content), (problems(text, result.structured_content), text)
    return result.structured_content


def _refused(result: Any, code: str) -> dict[str, Any]:
    text = "\n".join(block.text for block in result.content if block.type == "text")
    assert result.is_error, text
    assert not problems(text, result.structured_content), text
    assert result.structured_content["error"]["code"] == code, text
    return result.structured_content


async def _agent(base: str, person: Person, body) -> None:  # type: ignore[no-untyped-def]
    storage = Memory()

    async def redirect_handler(url: str) -> None:
        await asyncio.to_thread(person.sign_in_and_consent, url)

    async def callback_handler() -> AuthorizationCodeResult:
        assert person.result is not None
        return person.result

    provider = OAuthClientProvider(
        server_url=f"{base}/api/mcp",
        client_metadata=OAuthClientMetadata(
            client_name="Weft e2e agent",
            redirect_uris=[AnyUrl(REDIRECT)],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )
    async with (
        httpx2.AsyncClient(auth=provider, timeout=30) as http,
        streamable_http_client(f"{base}/api/mcp", http_client=http) as (read, write, *_),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        await body(session, provider, storage)


def test_the_loop_end_to_end(weft, alice, bob, ws_a):
    task = task_create(
        workspace=ws_a, title="Write the release notes", review_required=True, by_user=alice
    ).task
    big = task_create(
        workspace=ws_a, title="Review-heavy change", review_required=True, estimated_review_minutes=60,
        by_user=alice,
    ).task  # fmt: skip
    third = task_create(workspace=ws_a, title="One more", by_user=alice).task
    person = Person(weft, alice.email, ws_a.slug)
    intruder_token, _ = agent_token(bob, ws_a, name="Second client", resource=[])

    async def loop(session: ClientSession, provider: OAuthClientProvider, storage: Memory) -> None:
        work = _ok(await session.call_tool("get_my_work", {}))
        assert work["capacity"]
        claim = _ok(await session.call_tool("start_task", {"id": task.pk}))
        lease = {"runId": claim["runId"], "leaseToken": claim["leaseToken"]}
        assert claim["renewEverySeconds"] == 300

        # A second client is refused, with a hint not to duplicate the work.
        async with httpx.AsyncClient(base_url=weft, timeout=30) as raw:
            response = await raw.post(
                "/api/mcp",
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": "start_task", "arguments": {"id": task.pk}}},
                headers={"authorization": f"Bearer {intruder_token}", **MCP_HEADERS},
            )  # fmt: skip
            second = response.json()["result"]
            assert second["isError"] and second["structuredContent"]["error"]["code"] == "already_claimed"
            text = second["content"][0]["text"]
            assert not problems(text, second["structuredContent"]), text

        _ok(await session.call_tool("report_progress", {**lease, "note": "Drafted the notes."}))
        _ok(
            await session.call_tool(
                "request_input", {**lease, "question": "Mention the outage?", "options": ["yes", "no"]}
            )
        )
        question = await in_thread(lambda: Question.objects.get(run__run_id=lease["runId"]))
        await in_thread(lambda: question_answer(question=question, user=alice, answer="yes"))
        work = _ok(await session.call_tool("get_my_work", {}))
        assert [a["answer"] for a in work["answers"]] == ["yes"], work

        done = _ok(await session.call_tool("complete_task", {
            **lease, "outcome": "Release notes written.", "claims": ["mentions the outage"],
            "artifacts": [{"kind": "url", "uri": "https://example.com/notes"}],
            "nextStep": "Publish the notes.",
        }))  # fmt: skip
        assert done
        item = await in_thread(lambda: InboxItem.objects.get(task=task, state="open"))
        await in_thread(lambda: inbox_decide(item=item, user=alice, decision="accept"))
        work = _ok(await session.call_tool("get_my_work", {}))
        assert [a["step"] for a in work["approvals"]] == ["Publish the notes."], work

        # Fill the Inbox: one review of about an hour, then nothing new may start.
        claim = _ok(await session.call_tool("start_task", {"id": big.pk}))
        _ok(await session.call_tool("complete_task", {
            "runId": claim["runId"], "leaseToken": claim["leaseToken"], "outcome": "Changed it.",
        }))  # fmt: skip
        _refused(await session.call_tool("start_task", {"id": third.pk}), "attention_queue_full")

        # The access token expires; the client refreshes by itself and carries on.
        old = storage.tokens
        assert old is not None and old.refresh_token
        await in_thread(
            lambda: AccessToken.objects.filter(user=alice).update(
                expires=timezone.now() - timedelta(seconds=1)
            )
        )
        provider.context.token_expiry_time = time.time() - 1
        _ok(await session.call_tool("get_board_state", {}))
        assert storage.tokens is not None and storage.tokens.access_token != old.access_token
        assert storage.tokens.refresh_token != old.refresh_token

    asyncio.run(_agent(weft, person, loop))


def test_a_replayed_refresh_token_over_http(weft, alice, ws_a):
    """The grace window and family revocation, against the server under uvicorn."""
    person = Person(weft, alice.email, ws_a.slug)
    grace = oauth2_settings.REFRESH_TOKEN_GRACE_PERIOD_SECONDS

    async def replay(session: ClientSession, provider: OAuthClientProvider, storage: Memory) -> None:
        _ok(await session.call_tool("get_my_work", {}))
        first = storage.tokens
        assert first is not None and first.refresh_token and storage.client is not None
        client_id = storage.client.client_id
        assert client_id is not None
        # The access token expires; the client rotates its refresh token by itself.
        await in_thread(
            lambda: AccessToken.objects.filter(user=alice).update(
                expires=timezone.now() - timedelta(seconds=1)
            )
        )
        provider.context.token_expiry_time = time.time() - 1
        _ok(await session.call_tool("get_my_work", {}))
        second = storage.tokens
        assert second is not None and second.refresh_token
        assert second.refresh_token != first.refresh_token

        async with httpx.AsyncClient(base_url=weft, timeout=30) as raw:

            async def refresh(token: str) -> httpx.Response:
                data = {"grant_type": "refresh_token", "refresh_token": token, "client_id": client_id}
                return await raw.post("/o/token/", data=data)

            # A concurrent refresh replays the old token inside the grace window: the same new pair.
            again = await refresh(first.refresh_token)
            assert again.status_code == 200, again.text
            assert again.json()["access_token"] == second.access_token

            # The window passes (the server's clock decides: age the rotation in the database).
            await in_thread(
                lambda: RefreshToken.objects.filter(user=alice, revoked__isnull=False).update(
                    revoked=F("revoked") - timedelta(seconds=grace + 30)
                )
            )
            late = await refresh(first.refresh_token)
            assert late.status_code == 400 and late.json()["error"] == "invalid_grant", late.text
            # The whole family is revoked: the newest refresh token and its access token too.
            newest = await refresh(second.refresh_token)
            assert newest.status_code == 400, newest.text
            listed = await raw.post(
                "/api/mcp",
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
                headers={"authorization": f"Bearer {second.access_token}", **MCP_HEADERS},
            )
            assert listed.status_code == 401, listed.text

    asyncio.run(_agent(weft, person, replay))
