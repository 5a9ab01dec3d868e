"""The hint audit over REST: every endpoint, on a success path and an error path, ends with one next
action written as a REST call, and the call it names (Next:, Fix:, a Wait:'s check) is run at once
and must not fail with invalid_argument, not_found or lease_lost. Every tool a hint can name has
a route."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from api.routes import ROUTES, Call, route_for
from tests.api.conftest import Answer, Api, signed_in
from tests.api.harness import hinted
from weft.hints import has_placeholder

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
BROKEN = {"invalid_argument", "not_found", "lease_lost"}
MISSING = 987654321
NO_RUN = "00000000-0000-4000-8000-000000000000"
HINT_MAKERS = {"next_", "fix", "wait", "Call", "fallback_read"}


def _hinted_tools() -> set[str]:
    """Every tool name a production module passes to a hint maker (next_, fix, wait, Call)."""
    found: set[str] = set()
    for package in ("accounts", "boards", "hooks", "issues", "weft", "api"):
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Call) and getattr(node.func, "id", None) in HINT_MAKERS:
                    args = [a for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
                    position = 1 if node.func.id == "wait" else 0  # type: ignore[attr-defined]
                    found.update(str(a.value) for a in args if node.args.index(a) == position)
    return found - {""}


def test_every_tool_a_hint_can_name_has_a_route():
    tools = _hinted_tools()
    assert {"get_my_work", "start_task", "report_progress", "get_task", "list_subscriptions"} <= tools
    for tool in tools:
        route_for(Call(tool, {"id": 1, "runId": "r", "boardId": 1}))


AUDITED: dict[str, set[str]] = {}


def audit(api: Api, name: str, answer: Answer, *, error: bool) -> None:
    """Check one answer's hint, then run the call it names."""
    body = answer.body
    assert isinstance(body, dict) and "_next_action" in body, (name, body)
    line = body["_next_action"]
    assert (answer.status >= 400) is error, (name, answer.status, body)
    if error:
        assert line.startswith(("Fix: ", "Wait: ")) and body["error"]["code"], (name, body)
    else:
        assert not line.startswith("Fix: "), (name, line)
    assert not has_placeholder(line), (name, line)
    if "_or_action" in body:
        assert line.startswith("Next: ") and body["_or_action"].startswith("Or: "), (name, body)
    marker, call = hinted(line)
    if marker in ("Next", "Fix"):
        assert call is not None, f"{name}: {line!r} is not a complete REST call"
    AUDITED.setdefault(name, set()).add("error" if error else "success")
    if call is None or call.path.startswith("/.well-known/"):
        return
    call.tool()  # the route table knows it
    followed = api.call(call.method, call.path, call.query if call.method == "GET" else call.body)
    code = (followed.body or {}).get("error", {}).get("code") if isinstance(followed.body, dict) else None
    assert code not in BROKEN, f"{name} hinted {line!r}, which failed: {followed.body}"


def _operation_names() -> set[str]:
    return {r.operation_id for r in ROUTES if not r.external}


def test_every_endpoint_keeps_the_hint_contract(api, person, alice, carol, ws_b, public_dns):
    suspended = signed_in(carol, ws_b)
    ws_b.is_suspended = True
    ws_b.save(update_fields=["is_suspended"])

    def ok(name: str, method: str, path: str, body: Any = None, caller: Api = api) -> Answer:
        answer = caller.call(method, path, body)
        audit(caller, name, answer, error=False)
        return answer

    def refused(name: str, method: str, path: str, body: Any = None, caller: Api = api) -> None:
        audit(caller, name, caller.call(method, path, body), error=True)

    ok("get_my_work", "GET", "work")
    task = ok("create_task", "POST", "tasks", {"title": "Audit the hints"}).body["task"]
    other = api.post("tasks", {"title": "A second task"}).body["task"]
    ok("list_boards", "GET", "boards")
    ok("get_board_state", "GET", f"boards/{task['boardId']}")
    ok("get_default_board_state", "GET", "board")
    ok("list_tasks", "GET", "tasks", {"limit": 1})
    ok("search", "GET", "tasks/search", {"query": "Audit"})
    ok("get_task", "GET", f"tasks/{other['id']}")
    ok("update_task", "PATCH", f"tasks/{other['id']}", {"priority": 2})
    movable = api.post("tasks", {"title": "Move me"}).body["task"]
    ok("move_task", "POST", f"tasks/{movable['id']}/move", {"column": "backlog"})
    claim = ok("start_task", "POST", f"tasks/{task['id']}/start").body
    lease = {"leaseToken": claim["leaseToken"]}
    ok("report_progress", "POST", f"runs/{claim['runId']}/heartbeat", {**lease, "note": "Read the code."})
    ok("request_input", "POST", f"runs/{claim['runId']}/ask", {**lease, "question": "Ship it?"})
    ok("complete_task", "POST", f"runs/{claim['runId']}/complete", {**lease, "outcome": "Checked."})
    third = api.post("tasks", {"title": "A third task"}).body["task"]
    second = api.post(f"tasks/{third['id']}/start").body
    ok(
        "release_task",
        "POST",
        f"runs/{second['runId']}/release",
        {"leaseToken": second["leaseToken"], "reason": "Not mine."},
    )
    fourth = api.post("tasks", {"title": "A fourth task"}).body["task"]
    chained = api.post(f"tasks/{fourth['id']}/start").body
    body = {"leaseToken": chained["leaseToken"], "outcome": "Checked.", "startNext": True}
    following = ok("complete_task", "POST", f"runs/{chained['runId']}/complete", body).body["next"]
    assert following["started"] is True, following
    api.post(f"runs/{following['runId']}/release", {"leaseToken": following["leaseToken"], "reason": "x"})
    spec = {"url": "https://hooks.example.com/audit", "eventTypes": ["task.created"]}
    sub = ok("subscribe", "POST", "subscriptions", spec).body["subscription"]
    ok("list_subscriptions", "GET", "subscriptions")
    ok("unsubscribe", "DELETE", f"subscriptions/{sub['id']}")
    report = {"title": "The board is slow", "body": "get_board_state takes 4 s.", "kind": "performance"}
    issue = ok("submit_issue", "POST", "issues", {**report, "reporter_app_version": "1.4.2"}).body["issue"]
    ok("get_issue_status", "GET", f"issues/{issue['id']}")
    ok("add_issue_message", "POST", f"issues/{issue['id']}/messages", {"body": "Also on 1.4.3."})
    ok("list_issues", "GET", "issues", {"status": "open"})
    made = ok("triage_issue", "POST", f"issues/{issue['id']}/triage", {"action": "make_task"}).body
    assert made["_next_action"] == f"Next: POST /api/v1/tasks/{made['taskId']}/start {{}}"
    answered = api.post("issues", {**report, "reporter_app_version": "1.4.2"}).body["issue"]
    ok("triage_issue", "POST", f"issues/{answered['id']}/triage", {"action": "ask", "body": "Which board?"})

    # A person's Inbox: the question request_input asked, then a review to decide.
    inbox = ok("list_inbox", "GET", "inbox", caller=person).body
    question = next(row for row in inbox["open"] if row["kind"] == "question")["question"]
    ok("answer_question", "POST", f"questions/{question['id']}/answer", {"answer": "Yes"}, caller=person)
    reviewed = api.post("tasks", {"title": "Review me", "reviewRequired": True}).body["task"]
    run = api.post(f"tasks/{reviewed['id']}/start").body
    api.post(f"runs/{run['runId']}/complete", {"leaseToken": run["leaseToken"], "outcome": "Done."})
    item = next(row for row in person.get("inbox").body["open"] if row["taskId"] == reviewed["id"])
    ok("decide_inbox_item", "POST", f"inbox/{item['id']}/decide", {"decision": "accept"}, caller=person)

    bad = {"leaseToken": "not-the-token"}
    refused("get_my_work", "GET", "work", caller=suspended)
    refused("list_boards", "GET", "boards", caller=suspended)
    refused("get_board_state", "GET", f"boards/{MISSING}")
    refused("get_default_board_state", "GET", "board", caller=suspended)
    refused("list_tasks", "GET", "tasks", {"cursor": "not-a-cursor"})
    refused("search", "GET", "tasks/search", {"query": "x", "limit": 0})
    refused("get_task", "GET", f"tasks/{MISSING}")
    refused("create_task", "POST", "tasks", {"title": ""})
    refused("update_task", "PATCH", f"tasks/{MISSING}", {"title": "x"})
    refused("move_task", "POST", f"tasks/{movable['id']}/move", {"column": "done"})
    refused("start_task", "POST", f"tasks/{MISSING}/start")
    refused(
        "report_progress",
        "POST",
        f"runs/{second['runId']}/heartbeat",
        {"leaseToken": second["leaseToken"], "note": "late"},
    )
    refused("request_input", "POST", f"runs/{NO_RUN}/ask", {**bad, "question": "?"})
    refused("complete_task", "POST", f"runs/{NO_RUN}/complete", {**bad, "outcome": "x"})
    refused("release_task", "POST", f"runs/{NO_RUN}/release", {**bad, "reason": "x"})
    refused(
        "subscribe",
        "POST",
        "subscriptions",
        {"url": "ftp://hooks.example.com/x", "eventTypes": ["task.created"]},
    )
    refused("list_subscriptions", "GET", "subscriptions", caller=suspended)
    refused("unsubscribe", "DELETE", f"subscriptions/{MISSING}")
    refused("submit_issue", "POST", "issues", report)  # no build named: the Fix names one
    refused("get_issue_status", "GET", f"issues/{MISSING}")
    refused("add_issue_message", "POST", f"issues/{MISSING}/messages", {"body": "More detail."})
    refused("list_issues", "GET", "issues", {"limit": 0})
    refused("triage_issue", "POST", f"issues/{MISSING}/triage", {"action": "close"})
    refused("triage_issue", "POST", f"issues/{answered['id']}/triage", {"action": "duplicate"})
    refused("triage_issue", "POST", f"issues/{answered['id']}/triage", {"action": "resolve"})
    refused("get_my_work", "GET", "work", caller=Api(api.client, "expired-or-never-issued"))
    refused("list_inbox", "GET", "inbox")  # an agent's token decides nothing
    refused("decide_inbox_item", "POST", f"inbox/{MISSING}/decide", {"decision": "drop"}, caller=person)
    refused("answer_question", "POST", f"questions/{MISSING}/answer", {"answer": "No"}, caller=person)

    unaudited = {name for name in _operation_names() if AUDITED.get(name) != {"success", "error"}}
    assert not unaudited, f"endpoints without both paths audited: {sorted(unaudited)}"


def test_a_members_agent_is_told_to_wait_for_a_maintainer(api, bob, ws_a):
    issue = api.post(
        "issues", {"title": "Slow", "body": "4 s.", "kind": "bug", "reporter_app_version": "1.4.2"}
    ).body["issue"]
    member = signed_in(bob, ws_a)
    triaged = member.call("POST", f"issues/{issue['id']}/triage", {"action": "close"})
    assert triaged.status == 403 and triaged.body["error"]["code"] == "forbidden"
    audit(member, "triage_issue", triaged, error=True)
    assert triaged.body["_next_action"].endswith(f"GET /api/v1/issues/{issue['id']}")
    audit(member, "list_issues", member.call("GET", "issues"), error=True)
