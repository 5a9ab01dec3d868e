"""Ownership cases: how tests/test_ownership.py reaches every URL of the web app.

tests/test_ownership.py walks the whole URLconf. Every named URL pattern must appear either in
PUBLIC (with the reason it needs no ownership check) or in CASES, or the suite fails. Only
third-party prefixes listed in THIRD_PARTY_PREFIXES are skipped.

For each case the test signs in as carol (owner of workspace B, no seat in A) and asserts a 404
for GET and for POST on the URL built from workspace A's objects. For every URL with an object
id it also builds the URL with carol's own workspace slug and workspace A's object id: that must
answer exactly like a missing id (404 for the methods the view takes), and nothing of workspace A
may change. It also signs in as alice
(owner of A) and, for pages, asserts the status in `alice_get` (200 by default) — proof that the
404 is about ownership and not a broken URL.

Adding a URL:

    CASES["boards:task"] = lambda o: {"slug": o.ws.slug, "task_id": o.task.pk}
    CASES["boards:task_move"] = Case(lambda o: {"slug": o.ws.slug, "task_id": o.task.pk}, alice_get=None)

- The key is the URL's full name, namespace included ("boards:board").
- The value is a callable `(objects) -> dict` of URL kwargs, or a `Case` wrapping one. Use
  `Case(..., alice_get=None)` for POST-only URLs (alice's GET is not checked), or another status
  (`alice_get=302`) for a GET that redirects.
- `Case(..., post={...})` is the form data of a POST that would change something if the view
  reached the object (carol's own-workspace POST with a foreign id sends it, so a lost scope
  shows as a change, not as a form error).
- `objects` (an `Objects`) holds workspace A's objects: `ws`, `alice`, `bob`, `bob_seat`,
  `alice_seat`, `invitation` (pending, for dan@example.com), and lazily created extras such as
  `board` and `task`. Add an extra with `@extra("name")` on a function `(objects) -> object`;
  it runs only when a case first reads `objects.name`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from accounts.models import Invitation, Seat, User, Workspace

Kwargs = Callable[["Objects"], dict[str, Any]]


@dataclass(frozen=True)
class Case:
    kwargs: Kwargs
    # What alice (owner of workspace A) gets for GET; None for POST-only URLs.
    alice_get: int | None = 200
    # Form data of a POST that changes the object when the view reaches it.
    post: dict[str, Any] = field(default_factory=dict)


# Third-party apps with their own access rules: URL prefixes and namespaces that are not walked.
# The REST API is skipped too: it takes bearer tokens, not a signed-in browser, and
# tests/api/test_isolation.py walks its route table with a foreign and a missing id instead.
THIRD_PARTY_PREFIXES = ("admin/", "accounts/", "o/", "static/", "api/v1/")
THIRD_PARTY_NAMESPACES = ("admin", "oauth2_provider")

# URL names that take no tenant object, with the reason.
PUBLIC: dict[str, str] = {
    "home": "redirects to the signed-in user's own workspace",
    "workspace_create": "creates a new workspace owned by the caller",
    "invite_accept": "the token is the capability; tests/accounts/test_invitations.py covers it",
    "connections": "lists only the caller's own agent connections",
    "agent_connect": "set-up instructions; names no tenant object",
    "notify_settings": "the caller's own notification settings and devices",
    "account_profile": "the caller's own display name",
    "push_key": "the server's public VAPID key",
    "push_subscribe": "stores a device for the caller only",
    "push_unsubscribe": "removes only the caller's own device (tests/notify covers another person's)",
    "service_worker": "the same script for everyone",
    "manifest": "the same web app manifest for everyone",
}

_EXTRAS: dict[str, Callable[[Objects], object]] = {}


def extra(name: str) -> Callable[[Callable[[Objects], object]], Callable[[Objects], object]]:
    """Register a lazily created object of workspace A under `objects.<name>`."""

    def register(factory: Callable[[Objects], object]) -> Callable[[Objects], object]:
        _EXTRAS[name] = factory
        return factory

    return register


class Objects:
    """Workspace A's objects; extras are created on first use and cached."""

    def __init__(self, *, ws: Workspace, alice: User, bob: User, invitation: Invitation) -> None:
        self.ws = ws
        self.alice = alice
        self.bob = bob
        self.alice_seat = Seat.objects.get(workspace=ws, user=alice)
        self.bob_seat = Seat.objects.get(workspace=ws, user=bob)
        self.invitation = invitation
        self._cache: dict[str, object] = {}

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name not in _EXTRAS:
            raise AttributeError(f"objects has no {name!r}; register it with @extra({name!r})")
        if name not in self._cache:
            self._cache[name] = _EXTRAS[name](self)
        return self._cache[name]


@extra("board")
def _board(o: Objects) -> object:
    from boards.services import board_default

    return board_default(workspace=o.ws)


@extra("task")
def _task(o: Objects) -> object:
    from boards.services import task_create

    return task_create(workspace=o.ws, title="Ownership probe", board=o.board, by_user=o.alice).task


@extra("labelled_task")
def _labelled_task(o: Objects) -> object:
    from boards.services import label_create, task_assign, task_create

    ws: Workspace = o.ws
    label = label_create(workspace=ws, name="Probe")
    task = task_create(workspace=ws, title="Labelled probe", board=o.board, labels=[label.name]).task
    return task_assign(task=task, assignee=f"user:{o.alice.pk}").task


@extra("connection")
def _connection(o: Objects) -> object:
    from accounts.models import AgentConnection

    return AgentConnection.objects.create(workspace=o.ws, user=o.alice, name="Ownership probe")


@extra("token")
def _token(o: Objects) -> object:
    from accounts.tokens import pat_create

    return pat_create(seat=o.alice_seat, name="Ownership probe", expires_in_days=None).token


@extra("review_item")
def _review_item(o: Objects) -> object:
    from tests.web.factories import make_review

    return make_review(o.ws, o.connection)


@extra("question_item")
def _question_item(o: Objects) -> object:
    from tests.web.factories import make_question

    return make_question(o.ws, o.connection)


@extra("plan_change")
def _plan_change(o: Objects) -> object:
    from accounts.models import PlanChange

    return PlanChange.objects.create(
        workspace=o.ws,
        by_user=o.alice,
        from_plan="free",
        from_period="monthly",
        to_plan="pro",
        to_period="monthly",
        seats=2,
        provider="stripe",
        reference="cs_test_probe",
        state=PlanChange.PENDING,
    )


def _ws(o: Objects) -> dict[str, Any]:
    return {"slug": o.ws.slug}


def _post(kwargs: Kwargs, **data: Any) -> Case:
    return Case(kwargs, alice_get=None, post=data)


CASES: dict[str, Kwargs | Case] = {
    # accounts
    "workspace_dashboard": _ws,
    "workspace_switch": Case(_ws, alice_get=302),
    "workspace_members": _ws,
    "workspace_plan": _ws,
    "plan_change": _post(_ws, plan="pro", period="monthly"),
    "plan_change_return": Case(lambda o: {"slug": o.ws.slug, "change_id": o.plan_change.pk}, alice_get=302),
    "plan_change_cancel": Case(lambda o: {"slug": o.ws.slug, "change_id": o.plan_change.pk}, alice_get=302),
    "workspace_leave": _post(_ws),
    "member_invite": _post(_ws),
    "member_role": _post(lambda o: {"slug": o.ws.slug, "seat_id": o.bob_seat.pk}, role="admin"),
    "member_remove": _post(lambda o: {"slug": o.ws.slug, "seat_id": o.bob_seat.pk}),
    "invitation_revoke": _post(lambda o: {"slug": o.ws.slug, "invitation_id": o.invitation.pk}),
    "connection_revoke": _post(lambda o: {"connection_id": o.connection.pk}),
    "workspace_tokens": _ws,
    "token_create": _post(_ws, name="Taken over", expires_in="never"),
    "token_revoke": _post(lambda o: {"slug": o.ws.slug, "token_id": o.token.pk}),
    # boards (web)
    "boards:board": _ws,
    "boards:trash": _ws,
    "boards:inbox": _ws,
    "boards:task_create": _post(_ws),
    "boards:task": lambda o: {"slug": o.ws.slug, "task_id": o.task.pk},
    "boards:task_edit": _post(
        lambda o: {"slug": o.ws.slug, "task_id": o.task.pk},
        title="Taken over",
        description="",
        priority="3",
        estimated_review_minutes="9",
    ),
    "boards:comment_add": _post(lambda o: {"slug": o.ws.slug, "task_id": o.task.pk}, body="Taken over"),
    "boards:task_move": _post(lambda o: {"slug": o.ws.slug, "task_id": o.task.pk}, column="done"),
    "boards:task_start": _post(lambda o: {"slug": o.ws.slug, "task_id": o.task.pk}),
    "boards:task_stop": _post(lambda o: {"slug": o.ws.slug, "task_id": o.task.pk}),
    # Reaching the task would take its label off, add a label, and unassign alice.
    "boards:task_labels": _post(lambda o: {"slug": o.ws.slug, "task_id": o.labelled_task.pk}, label=[]),
    "boards:label_create": _post(
        lambda o: {"slug": o.ws.slug, "task_id": o.task.pk}, name="Taken over", colour="red"
    ),
    "boards:task_assign": _post(lambda o: {"slug": o.ws.slug, "task_id": o.labelled_task.pk}, assignee=""),
    "boards:task_trash": _post(lambda o: {"slug": o.ws.slug, "task_id": o.task.pk}),
    "boards:task_restore": _post(lambda o: {"slug": o.ws.slug, "task_id": o.task.pk}),
    "boards:inbox_decide": _post(
        lambda o: {"slug": o.ws.slug, "item_id": o.review_item.pk}, decision="accept"
    ),
    "boards:inbox_undo_drop": _post(lambda o: {"slug": o.ws.slug, "item_id": o.review_item.pk}),
    "boards:question_answer": _post(
        lambda o: {"slug": o.ws.slug, "question_id": o.question_item.question_id}, answer="Postgres"
    ),
    "boards:tasks_bulk": _post(_ws, action="trash"),
    "boards:boards": _ws,
    "boards:board_create": _post(_ws, name="Taken over"),
    "boards:board_rename": _post(lambda o: {"slug": o.ws.slug, "board_id": o.board.pk}, name="Taken over"),
    "boards:board_archive": _post(lambda o: {"slug": o.ws.slug, "board_id": o.board.pk}),
    "boards:board_restore": _post(lambda o: {"slug": o.ws.slug, "board_id": o.board.pk}),
}

from tests.hooks.ownership_cases import CASES as HOOK_CASES  # noqa: E402  (it registers its extras here)
from tests.issues.ownership_cases import CASES as ISSUE_CASES  # noqa: E402

CASES.update(HOOK_CASES)
CASES.update(ISSUE_CASES)
