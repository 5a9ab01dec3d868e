"""Tenant isolation over REST: every endpoint that names an object answers an id of another
workspace exactly as it answers a missing id, and changes nothing of that workspace."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from api.routes import ROUTES
from boards.models import InboxItem, Question
from tests.test_ownership import _workspace_rows
from weft.models import Event

pytestmark = pytest.mark.django_db

MISSING = {
    "task": "987654321",
    "board": "987654321",
    "sub": "987654321",
    "issue": "987654321",
    "run": "00000000-0000-4000-8000-000000000000",
    "item": "987654321",
    "question": "987654321",
}

# (method, path, body or query): {name} is the other workspace's object, or a missing one.
CASES: list[tuple[str, str, dict[str, Any] | None]] = [
    ("GET", "tasks/{task}", None),
    ("PATCH", "tasks/{task}", {"priority": 2}),
    ("POST", "tasks/{task}/move", {"column": "backlog"}),
    ("POST", "tasks/{task}/start", {}),
    ("GET", "boards/{board}", None),
    ("POST", "runs/{run}/heartbeat", {"leaseToken": "{lease}", "note": "mine now"}),
    ("POST", "runs/{run}/ask", {"leaseToken": "{lease}", "question": "Whose is this?"}),
    ("POST", "runs/{run}/complete", {"leaseToken": "{lease}", "outcome": "Taken over."}),
    ("POST", "runs/{run}/release", {"leaseToken": "{lease}", "reason": "Taken over."}),
    ("DELETE", "subscriptions/{sub}", {}),
    ("GET", "issues/{issue}", None),
    ("POST", "issues/{issue}/messages", {"body": "Whose is this?", "reporter_app_version": "1.4.2"}),
    ("POST", "issues/{issue}/triage", {"action": "resolve", "body": "Not yours to resolve."}),
    ("POST", "tasks", {"title": "Into another board", "boardId": "{board}"}),
    ("GET", "tasks", {"boardId": "{board}"}),
]


# The same, as alice herself (a personal access token that may decide her Inbox).
PERSON_CASES: list[tuple[str, str, dict[str, Any] | None]] = [
    ("POST", "inbox/{item}/decide", {"decision": "accept"}),
    ("POST", "questions/{question}/answer", {"answer": "Mine now."}),
]


def _fill(value: Any, names: dict[str, str]) -> Any:
    text = json.dumps(value)
    for name, ident in names.items():
        text = text.replace("{" + name + "}", ident)
    filled = json.loads(text)
    if isinstance(filled, dict) and "boardId" in filled:
        filled["boardId"] = int(filled["boardId"])
    return filled


def test_the_cases_cover_every_route_that_names_an_object():
    covered = {
        (
            m,
            "/"
            + p.replace("{task}", "{id}")
            .replace("{sub}", "{id}")
            .replace("{issue}", "{id}")
            .replace("{board}", "{boardId}")
            .replace("{run}", "{runId}")
            .replace("{item}", "{id}")
            .replace("{question}", "{id}"),
        )
        for m, p, _ in [*CASES, *PERSON_CASES]
    }
    named = {(r.method, r.template) for r in ROUTES if r.path_args and not r.external}
    assert named <= covered, sorted(named - covered)


@pytest.fixture
def theirs(api_b, public_dns) -> dict[str, str]:
    task = api_b.post("tasks", {"title": "Carol's"}).body["task"]
    claim = api_b.post(f"tasks/{task['id']}/start").body
    other = api_b.post("tasks", {"title": "Carol's other"}).body["task"]
    sub = api_b.post("subscriptions", {"url": "https://hooks.example.com/c", "eventTypes": ["task.created"]})
    report = {"title": "Carol's report", "body": "Slow.", "kind": "bug", "reporter_app_version": "1.4.2"}
    issue = api_b.post("issues", report).body["issue"]
    return {
        "task": str(other["id"]),
        "board": str(task["boardId"]),
        "run": claim["runId"],
        "lease": claim["leaseToken"],
        "sub": str(sub.body["subscription"]["id"]),
        "issue": str(issue["id"]),
    }


def _without(body: Any, ident: str, missing: str) -> Any:
    text = json.dumps(body)
    for value in (missing, ident):
        text = re.sub(rf"(?<![\w-]){re.escape(value)}(?![\w-])", "ID", text)
    return json.loads(text)


@pytest.mark.parametrize("method,path,body", CASES, ids=[f"{m} {p}" for m, p, _ in CASES])
def test_a_foreign_id_answers_like_a_missing_one(api, ws_b, theirs, method, path, body):
    before, events = _workspace_rows(ws_b), Event.objects.filter(workspace=ws_b).count()
    name = path.split("{")[1].split("}")[0] if "{" in path else "board"
    foreign = api.call(method, _fill(path, theirs), _fill(body, theirs))
    missing_names = {**theirs, name: MISSING[name]}
    missing = api.call(method, _fill(path, missing_names), _fill(body, missing_names))
    assert foreign.status == missing.status, (foreign.body, missing.body)
    assert _without(foreign.body, theirs[name], MISSING[name]) == _without(
        missing.body, theirs[name], MISSING[name]
    )
    if name != "run":
        assert foreign.status == 404 and foreign.body["error"]["code"] == "not_found"
    else:
        # A run is named with its lease: an unknown run holds no lease, so the lease is lost.
        assert foreign.body["error"]["code"] in {"not_found", "lease_lost"}
    assert _workspace_rows(ws_b) == before
    assert Event.objects.filter(workspace=ws_b).count() == events


@pytest.mark.parametrize(
    ("name", "extra"),
    [("board", {"action": "make_task"}), ("issue", {"action": "duplicate"})],
    ids=["make_task boardId", "duplicate duplicateOf"],
)
def test_a_foreign_id_in_a_triage_answers_like_a_missing_one(api, ws_a, ws_b, theirs, name, extra):
    """A's own issue, triaged with B's board or B's issue as the argument."""
    report = {"title": "Acme's report", "body": "Slow.", "kind": "bug", "reporter_app_version": "1.4.2"}
    mine = api.post("issues", report).body["issue"]["id"]
    argument = "boardId" if name == "board" else "duplicateOf"
    before, events = _workspace_rows(ws_b), Event.objects.filter(workspace=ws_b).count()
    mine_before = Event.objects.filter(workspace=ws_a).count()
    foreign = api.call("POST", f"issues/{mine}/triage", {**extra, argument: int(theirs[name])})
    missing = api.call("POST", f"issues/{mine}/triage", {**extra, argument: int(MISSING[name])})
    assert foreign.status == missing.status == 404 and foreign.body["error"]["code"] == "not_found"
    assert _without(foreign.body, theirs[name], MISSING[name]) == _without(
        missing.body, theirs[name], MISSING[name]
    )
    assert _workspace_rows(ws_b) == before
    assert Event.objects.filter(workspace=ws_b).count() == events
    assert Event.objects.filter(workspace=ws_a).count() == mine_before


@pytest.fixture
def their_inbox(api_b) -> dict[str, str]:
    """Carol's review and question, waiting in her Inbox."""
    task = api_b.post("tasks", {"title": "Carol's review", "reviewRequired": True}).body["task"]
    run = api_b.post(f"tasks/{task['id']}/start").body
    api_b.post(f"runs/{run['runId']}/complete", {"leaseToken": run["leaseToken"], "outcome": "Done."})
    asked = api_b.post("tasks", {"title": "Carol's question"}).body["task"]
    held = api_b.post(f"tasks/{asked['id']}/start").body
    api_b.post(f"runs/{held['runId']}/ask", {"leaseToken": held["leaseToken"], "question": "Which?"})
    return {
        "item": str(InboxItem.objects.get(task_id=task["id"]).pk),
        "question": str(Question.objects.get(task_id=asked["id"]).pk),
    }


@pytest.mark.parametrize("method,path,body", PERSON_CASES, ids=[f"{m} {p}" for m, p, _ in PERSON_CASES])
def test_a_person_naming_a_foreign_id_gets_what_a_missing_one_gets(
    person, ws_b, their_inbox, method, path, body
):
    before, events = _workspace_rows(ws_b), Event.objects.filter(workspace=ws_b).count()
    name = path.split("{")[1].split("}")[0]
    foreign = person.call(method, _fill(path, their_inbox), body)
    missing = person.call(method, _fill(path, {name: MISSING[name]}), body)
    assert foreign.status == missing.status == 404 and foreign.body["error"]["code"] == "not_found"
    assert _without(foreign.body, their_inbox[name], MISSING[name]) == _without(
        missing.body, their_inbox[name], MISSING[name]
    )
    assert _workspace_rows(ws_b) == before
    assert Event.objects.filter(workspace=ws_b).count() == events
