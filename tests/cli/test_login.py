"""`weft login` through the browser (RFC 8628) with the installed `weft`: the person approves
the code the terminal prints, the CLI works the loop with the token it polled, renews it with its
refresh token, and `weft logout` revokes both at the server."""

from __future__ import annotations

import json
import re
import subprocess
from datetime import timedelta

import httpx
import pytest
from django.conf import settings
from django.test import Client
from django.utils import timezone
from oauth2_provider.models import AccessToken, RefreshToken

from accounts.models import AgentConnection, User, Workspace
from boards.models import Run
from boards.services import task_create
from tests.cli.conftest import Cli

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

CODE_LINE = re.compile(r"Open (?P<page>\S+) and enter the code (?P<code>\S+)")


def _person(url: str, user: User) -> httpx.Client:
    """A browser signed in as `user`: the session cookie of a real login."""
    django_client = Client()
    django_client.force_login(user)
    cookie = django_client.cookies[settings.SESSION_COOKIE_NAME].value
    return httpx.Client(base_url=url, cookies={settings.SESSION_COOKIE_NAME: cookie}, timeout=30)


def _csrf(page: httpx.Response) -> str:
    found = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    assert found, page.text
    return found.group(1)


def _decide(browser: httpx.Client, code: str, *, action: str, workspace: str) -> httpx.Response:
    """What the person does: open the page the terminal names, enter the code, allow or deny."""
    page = browser.get("/o/device/", params={"user_code": code})
    assert page.status_code == 200, page.text
    entered = browser.post("/o/device/", data={"user_code": code, "csrfmiddlewaretoken": _csrf(page)})
    assert entered.status_code == 302, entered.text
    confirm = browser.get(entered.headers["location"])
    assert confirm.status_code == 200
    decided = browser.post(
        entered.headers["location"],
        data={"action": action, "workspace": workspace, "csrfmiddlewaretoken": _csrf(confirm)},
    )
    assert decided.status_code == 302, decided.text
    return browser.get(decided.headers["location"])


def _start_login(cli: Cli) -> tuple[subprocess.Popen[str], str, str]:
    proc = cli.popen("login")
    assert proc.stderr is not None
    line = proc.stderr.readline()
    found = CODE_LINE.search(line)
    assert found, line
    return proc, found["page"], found["code"]


def _saved(cli: Cli) -> dict:
    return json.loads((cli.home / "weft" / "credentials.json").read_text())


def test_weft_login_signs_in_through_the_browser_and_logout_revokes(
    cli: Cli, weft_url: str, alice: User, ws_a: Workspace
) -> None:
    proc, page, code = _start_login(cli)
    assert page == f"{weft_url}/o/device/"
    with _person(weft_url, alice) as browser:
        done = _decide(browser, code, action="accept", workspace=ws_a.slug)
    assert "signed in" in done.text
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, (out, err)
    assert out.strip().endswith("Next: weft work")
    saved = _saved(cli)
    assert saved["client_id"] == "weft-cli" and saved["refresh_token"]
    connection = AgentConnection.objects.get(user=alice, application__client_id="weft-cli", revoked_at=None)
    assert connection.workspace_id == ws_a.pk

    task = task_create(workspace=ws_a, title="Rotate the logs").task
    assert cli("work").markers() == [f"Next: weft start-task --id {task.pk}"]
    started = cli("start", str(task.pk))
    assert started.code == 0, started
    assert Run.objects.get(task=task).connection_id == connection.pk

    logout = cli("logout")
    assert logout.code == 0, logout
    assert "revoked" in logout.out
    assert not AccessToken.objects.filter(application__client_id="weft-cli").exists()
    assert not RefreshToken.objects.filter(application__client_id="weft-cli", revoked=None).exists()
    refused = httpx.get(f"{weft_url}/api/v1/work", headers={"authorization": f"Bearer {saved['token']}"})
    assert refused.status_code == 401


def test_a_denied_login_exits_not_signed_in(cli: Cli, weft_url: str, alice: User, ws_a: Workspace) -> None:
    proc, _, code = _start_login(cli)
    with _person(weft_url, alice) as browser:
        done = _decide(browser, code, action="deny", workspace=ws_a.slug)
    assert "denied" in done.text
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 7, (out, err)
    assert "access_denied" in err
    assert out.strip() == f"Fix: weft login --url {weft_url}"
    assert not (cli.home / "weft" / "credentials.json").exists()


def test_an_expired_access_token_is_renewed_with_the_refresh_token(
    cli: Cli, weft_url: str, alice: User, ws_a: Workspace
) -> None:
    proc, _, code = _start_login(cli)
    with _person(weft_url, alice) as browser:
        _decide(browser, code, action="accept", workspace=ws_a.slug)
    assert proc.wait(30) == 0
    first = _saved(cli)
    AccessToken.objects.update(expires=timezone.now() - timedelta(seconds=1))
    work = cli("work")
    assert work.code == 0, work
    renewed = _saved(cli)
    assert renewed["token"] != first["token"]
    assert renewed["refresh_token"] != first["refresh_token"]
    # The spent refresh token is not the saved one any more, and the new one works.
    assert cli("work").code == 0
