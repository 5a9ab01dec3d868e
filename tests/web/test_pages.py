"""Every page of the people's side in Chromium at a desktop and a phone size: no horizontal
overflow at 390 px, the header on one row, no serious or critical axe-core violation, a
full-page screenshot of each (artifacts/screenshots/<page>-<size>.png). The board's own checks
(200 tasks, the new-task form, keys and palette) are tests/web/test_board_browser.py's.

`test_every_named_page_is_covered` walks the URLconfs: a named URL that is neither a page here
nor excluded with its reason fails it, so a new page gets its browser check.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from accounts.models import AgentConnection, Seat, User, Workspace
from accounts.services.invitations import invitation_create
from accounts.tokens import pat_create
from boards import services
from boards.models import LabelColour
from hooks.services import subscription_create
from tests.hooks.conftest import fake_dns
from tests.issues.helpers import submit
from tests.web.factories import make_question, make_review
from tests.web.live import CHROMIUM, SCREENSHOTS, LiveServer, browser, file_database, live

AXE = Path(settings.BASE_DIR) / "node_modules" / "axe-core" / "axe.min.js"
IN_CI = bool(os.environ.get("CI"))
SIZES = {"desktop": (1280, 800), "phone": (390, 844)}
BLOCKING_IMPACTS = ("serious", "critical")
BOARD_TASKS = 200
# One row of the header: its 56 px minimum and a little room for the border and rounding.
ONE_ROW = 64

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists() and not IN_CI, reason="needs Debian's Chromium at /usr/bin/chromium"
    ),
    pytest.mark.django_db(transaction=True),
]

__all__ = ["browser", "file_database", "live"]  # fixtures: pytest finds them in this module


@dataclass
class World:
    """The signed-in owner's workspace, with an agent; each page seeds what it shows."""

    alice: User
    ws: Workspace
    agent: AgentConnection
    monkeypatch: pytest.MonkeyPatch
    viewer: User | None = None  # who is signed in, when not alice

    @property
    def seat(self) -> Seat:
        return Seat.objects.select_related("workspace", "user").get(workspace=self.ws, user=self.alice)

    def w(self, rest: str = "") -> str:
        return f"/w/{self.ws.slug}/{rest}"


def _task_page(world: World) -> str:
    item = make_review(world.ws, world.agent, title="Write the changelog", next_step="Tag 1.4")
    services.comment_add(task=item.task, author=world.alice, body="Looks **good**; one link is broken.")
    _label_and_assign(world, item.task)
    return world.w(f"tasks/{item.task_id}/")


def _label_and_assign(world: World, task: Any) -> None:
    """Every label colour on the workspace, two of them on the task, and alice as its assignee."""
    for colour in LabelColour.values:
        services.label_create(workspace=world.ws, name=f"{colour.title()} label", colour=colour)
    services.task_update(task=task, labels=["Red label", "Teal label"])
    services.task_assign(task=task, assignee=f"user:{world.alice.pk}")


def _inbox(world: World) -> str:
    make_review(world.ws, world.agent, title="Review the invoice export", next_step="Ship it")
    make_question(world.ws, world.agent)
    return world.w("inbox/")


def _trash(world: World) -> str:
    task = services.task_create(workspace=world.ws, title="An old idea", by_user=world.alice).task
    services.task_trash(task=task, by_user=world.alice)
    return world.w("trash/")


def _board(world: World) -> str:
    plan = services.task_create(
        workspace=world.ws, title="Plan the 1.4 release", priority=2, by_user=world.alice
    )
    _label_and_assign(world, plan.task)
    services.task_create(workspace=world.ws, title="Collect feedback", column="backlog", by_user=world.alice)
    make_review(world.ws, world.agent, title="Update the API docs")
    return world.w("board/")


def _boards(world: World) -> str:
    services.task_create(workspace=world.ws, title="Plan the 1.4 release", by_user=world.alice)
    for name in ("Ops", "Website relaunch"):
        services.board_create(workspace=world.ws, name=name, by_seat=world.seat)
    old = services.board_create(workspace=world.ws, name="Conference 2026", by_seat=world.seat)
    services.board_archive(board=old, by_seat=world.seat)
    return world.w("boards/")


def _members(world: World) -> str:
    invitation_create(workspace=world.ws, invited_by=world.alice, email="dana@example.com", by=world.seat)
    return world.w("members/")


def _invite(world: World) -> str:
    invitation = invitation_create(
        workspace=world.ws, invited_by=world.alice, email="erin@example.com", by=world.seat
    )
    world.viewer = User.objects.create_user(email="erin@example.com", password="a long enough password")
    return f"/invite/{invitation.token}/"


def _tokens(world: World) -> str:
    pat_create(seat=world.seat, name="Deploy script", expires_in_days=30)
    return world.w("tokens/")


def _subscription(world: World) -> Any:
    fake_dns(world.monkeypatch, {})
    return subscription_create(
        workspace=world.ws,
        url="https://hooks.example.com/in",
        event_types=["task.created"],
        by_seat=world.seat,
    ).subscription


def _webhooks(world: World) -> str:
    _subscription(world)
    return world.w("webhooks/")


def _webhook(world: World) -> str:
    return world.w(f"webhooks/{_subscription(world).pk}/")


def _issues(world: World) -> str:
    submit(world.agent)
    submit(world.agent, title="Inbox count is stale", kind="bug")
    return world.w("issues/")


def _issue(world: World) -> str:
    return world.w(f"issues/{submit(world.agent).issue.pk}/")


def _consent(world: World) -> str:
    client = Client()
    app = client.post(
        "/o/register/",
        {
            "client_name": "Claude Code",
            "redirect_uris": ["http://localhost:53682/callback"],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        },
        content_type="application/json",
    ).json()
    query = (
        f"response_type=code&client_id={app['client_id']}&redirect_uri=http://localhost:53682/callback"
        "&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256"
        f"&state=s-1&scope=mcp%20offline_access&resource={settings.WEFT_MCP_URL}"
    )
    return f"/o/authorize/?{query}"


def _static(path: str) -> Callable[[World], str]:
    return lambda world: path


def _ws(rest: str) -> Callable[[World], str]:
    return lambda world: world.w(rest)


# page name -> (URL name, signed in, the path after seeding what it shows)
PAGES: dict[str, tuple[str, bool, Callable[[World], str]]] = {
    "login": ("account_login", False, _static("/accounts/login/")),
    "signup": ("account_signup", False, _static("/accounts/signup/")),
    "password-reset": ("account_reset_password", False, _static("/accounts/password/reset/")),
    "password-reset-done": ("account_reset_password_done", False, _static("/accounts/password/reset/done/")),
    "workspace-new": ("workspace_create", True, _static("/workspaces/new/")),
    "dashboard": ("workspace_dashboard", True, _ws("")),
    "board": ("boards:board", True, _board),
    "task": ("boards:task", True, _task_page),
    "inbox": ("boards:inbox", True, _inbox),
    "trash": ("boards:trash", True, _trash),
    "boards": ("boards:boards", True, _boards),
    "members": ("workspace_members", True, _members),
    "invitation": ("invite_accept", True, _invite),
    "plan": ("workspace_plan", True, _ws("plan/")),
    "agents": ("connections", True, _static("/agents/")),
    "connect": ("agent_connect", True, _static("/connect/")),
    "tokens": ("workspace_tokens", True, _tokens),
    "webhooks": ("hooks:subscriptions", True, _webhooks),
    "webhook": ("hooks:subscription", True, _webhook),
    "issues": ("issues:list", True, _issues),
    "issue": ("issues:issue", True, _issue),
    "logout": ("account_logout", True, _static("/accounts/logout/")),
    "email": ("account_email", True, _static("/accounts/email/")),
    "password-change": ("account_change_password", True, _static("/accounts/password/change/")),
    "verification-sent": ("account_email_verification_sent", False, _static("/accounts/confirm-email/")),
    "password-reset-key-done": (
        "account_reset_password_from_key_done",
        False,
        _static("/accounts/password/reset/key/done/"),
    ),
    "notifications": ("notify_settings", True, _static("/account/notifications/")),
    "profile": ("account_profile", True, _static("/account/profile/")),
    "consent": ("oauth2_provider:authorize", True, _consent),
    "device": ("oauth2_provider:device", True, _static("/o/device/")),
}

POST_ONLY = "a form's POST target (its GET answers 405 or sends back to its page)"
REDIRECT = "a redirect to another page covered here"
MACHINE = "answers JSON or JavaScript to a program, not a page"
EXCLUDED_NAMESPACES = {
    "admin": "Django's admin, for staff; its pages are Django's own",
    "api": "the REST API answers JSON to agents and scripts (its docs pages are drf-spectacular's)",
}
EXCLUDED: dict[str, str] = {
    "home": REDIRECT,
    "workspace_switch": REDIRECT,
    "plan_change_return": "the return from the payment provider's checkout: a redirect to the plan page",
    "account_set_password": "a redirect to the password change for anyone who has a password",
    "account_inactive": "reached only when an inactive account signs in; Weft deactivates none",
    "account_reauthenticate": "asked only before a sensitive change; the same form as the login page",
    "account_request_reauthentication_code": "login by mailed code is off",
    "account_confirm_reauthentication_code": "login by mailed code is off",
    "account_confirm_login_code": "login by mailed code is off",
    "account_confirm_email": "needs the key from a verification mail",
    "account_reset_password_from_key": "needs the key from a reset mail",
    "oauth2_provider:device-confirm": "needs a pending device grant from `weft login`",
    "oauth2_provider:device-grant-status": "needs a device grant from `weft login`",
    "oauth2_provider:legacy-authorize": "the consent page again, at the MCP default path",
    **dict.fromkeys(
        [
            "oauth2_provider:oauth-server-metadata",
            "oauth2_provider:oauth-resource-metadata",
            "oauth2_provider:oauth-resource-metadata-path",
            "oauth2_provider:token",
            "oauth2_provider:legacy-token",
            "oauth2_provider:revoke-token",
            "oauth2_provider:dcr-register",
            "oauth2_provider:legacy-register",
            "oauth2_provider:dcr-register-management",
            "oauth2_provider:device-authorization",
            "push_key",
            "push_subscribe",
            "push_unsubscribe",
            "service_worker",
            "manifest",
        ],
        MACHINE,
    ),
    **dict.fromkeys(
        [
            "connection_revoke",
            "workspace_leave",
            "plan_change",
            "plan_change_cancel",
            "member_invite",
            "member_role",
            "member_remove",
            "invitation_revoke",
            "boards:board_create",
            "boards:board_rename",
            "boards:board_archive",
            "boards:board_restore",
            "boards:task_create",
            "boards:task_edit",
            "boards:comment_add",
            "boards:task_labels",
            "boards:label_create",
            "boards:task_assign",
            "boards:task_move",
            "boards:task_start",
            "boards:task_stop",
            "boards:task_trash",
            "boards:task_restore",
            "boards:tasks_bulk",
            "boards:inbox_undo_drop",
            "boards:inbox_decide",
            "boards:question_answer",
            "token_create",
            "token_revoke",
            "hooks:subscription_create",
            "hooks:subscription_delete",
            "hooks:delivery_redeliver",
            "issues:close",
            "issues:reply",
            "issues:status",
            "issues:duplicate",
            "issues:upstream",
            "issues:task",
        ],
        POST_ONLY,
    ),
}


def _url_names(patterns: list[Any], namespace: str = "") -> Iterator[str]:
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            inner = pattern.namespace or ""
            if inner in EXCLUDED_NAMESPACES:
                continue
            yield from _url_names(pattern.url_patterns, f"{namespace}{inner}:" if inner else namespace)
        elif isinstance(pattern, URLPattern) and pattern.name:
            yield namespace + pattern.name


def test_every_named_page_is_covered() -> None:
    names = set(_url_names(get_resolver().url_patterns))
    covered = {url_name for url_name, _, _ in PAGES.values()}
    assert sorted(names - covered - set(EXCLUDED)) == [], "a page with no browser check: add it to PAGES"
    assert sorted((covered | set(EXCLUDED)) - names) == [], "PAGES or EXCLUDED names a URL that is gone"
    assert covered.isdisjoint(EXCLUDED)


@pytest.fixture(scope="module")
def axe_script() -> Path:
    if not AXE.exists():
        message = f"axe-core is missing at {AXE}: run `npm ci` at the repository root"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    return AXE


@pytest.fixture
def world(alice: User, ws_a: Workspace, agent: AgentConnection, monkeypatch: pytest.MonkeyPatch) -> World:
    return World(alice=alice, ws=ws_a, agent=agent, monkeypatch=monkeypatch)


@pytest.fixture
def open_page(browser: Any, live: LiveServer) -> Iterator[Callable[..., Any]]:
    """A new context at a size, signed in as `user` (or not), on `path`; the page once loaded."""
    contexts: list[Any] = []

    def open_(path: str, size: str, user: User | None) -> Any:
        width, height = SIZES[size]
        context = browser.new_context(
            base_url=live.url, viewport={"width": width, "height": height}, bypass_csp=True
        )
        context.set_default_timeout(8000)
        contexts.append(context)
        if user is not None:
            client = Client()
            client.force_login(user)
            cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
            context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": cookie, "url": live.url}])
        page = context.new_page()
        response = page.goto(path, wait_until="load")
        assert response is not None and response.status == 200, (path, response and response.status)
        return page

    yield open_
    for context in contexts:
        context.close()


AXE_RUN = """async () => {
  const result = await axe.run(document, {resultTypes: ["violations"]});
  return result.violations.map(v => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 5).map(n => n.target.join(" ")),
  }));
}"""


def blocking_violations(page: Any, script: Path) -> list[dict[str, Any]]:
    page.add_script_tag(path=str(script))
    found: list[dict[str, Any]] = page.evaluate(AXE_RUN)
    return [v for v in found if v["impact"] in BLOCKING_IMPACTS]


def overflow(page: Any) -> dict[str, int]:
    return dict(
        page.evaluate(
            "() => ({scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth})"
        )
    )


def shot(page: Any, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("name", list(PAGES))
def test_the_page_fits_passes_axe_and_is_screenshot(name, size, world, open_page, axe_script):
    _, signed_in, seed = PAGES[name]
    path = seed(world)
    page = open_page(path, size, (world.viewer or world.alice) if signed_in else None)
    shot(page, f"{name}-{size}")
    header = page.evaluate("() => document.querySelector('header.topbar').getBoundingClientRect().height")
    assert header <= ONE_ROW, f"{name}'s header takes {header} px at {size}: more than one row"
    if size == "phone":
        widths = overflow(page)
        assert widths["scrollWidth"] <= widths["innerWidth"], f"{name} overflows at 390 px: {widths}"
    assert blocking_violations(page, axe_script) == []
