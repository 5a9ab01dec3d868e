"""PURE: the REST route of every tool, and a hint's call rendered as the REST call it names.

One table: tool → (method, path template), where the template's `{names}` are the arguments
that go in the path and every other argument goes in the query (GET) or the JSON body. A tool
may have several routes (get_board_state with and without a board id): the first whose path
arguments are all given is the one a hint names. The URLconf is built from the same table, so
a hint can only name a call the API serves.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlencode

from weft.hints import Call, Hint

PREFIX = "/api/v1"
_PARAM = re.compile(r"{([A-Za-z]+)}")


@dataclass(frozen=True)
class Route:
    """One endpoint: the tool it serves, its method and path template (without the prefix)."""

    tool: str
    method: str
    template: str
    # Served outside the API (by the OAuth side of Weft), so its path takes no prefix.
    external: bool = False
    # The operation's name (OpenAPI operationId, URL name) when the tool has more than one route.
    name: str = ""

    @property
    def operation_id(self) -> str:
        return self.name or self.tool

    @property
    def path_args(self) -> tuple[str, ...]:
        return tuple(_PARAM.findall(self.template))

    def fits(self, args: Mapping[str, Any]) -> bool:
        return all(args.get(name) is not None for name in self.path_args)

    def path(self, args: Mapping[str, Any]) -> str:
        return ("" if self.external else PREFIX) + _PARAM.sub(
            lambda m: quote(str(args[m.group(1)]), safe=""), self.template
        )

    def rest_args(self, args: Mapping[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in args.items() if k not in self.path_args}

    def render(self, args: Mapping[str, Any]) -> str:
        """`GET /api/v1/tasks/12`, `GET /api/v1/search?query=x`, `POST /api/v1/tasks/12/start {}`."""
        rest = self.rest_args(args)
        if self.method == "GET":
            query = urlencode(sorted((k, _query_value(v)) for k, v in rest.items()))
            return f"GET {self.path(args)}" + (f"?{query}" if query else "")
        body = json.dumps(rest, sort_keys=True, separators=(", ", ": "))
        return f"{self.method} {self.path(args)} {body}"


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


ROUTES: tuple[Route, ...] = (
    Route("get_my_work", "GET", "/work"),
    Route("list_boards", "GET", "/boards"),
    Route("get_board_state", "GET", "/boards/{boardId}"),
    Route("get_board_state", "GET", "/board", name="get_default_board_state"),
    Route("list_tasks", "GET", "/tasks"),
    Route("create_task", "POST", "/tasks"),
    Route("search", "GET", "/tasks/search"),
    Route("get_task", "GET", "/tasks/{id}"),
    Route("update_task", "PATCH", "/tasks/{id}"),
    Route("move_task", "POST", "/tasks/{id}/move"),
    Route("start_task", "POST", "/tasks/{id}/start"),
    Route("report_progress", "POST", "/runs/{runId}/heartbeat"),
    Route("request_input", "POST", "/runs/{runId}/ask"),
    Route("complete_task", "POST", "/runs/{runId}/complete"),
    Route("release_task", "POST", "/runs/{runId}/release"),
    Route("list_subscriptions", "GET", "/subscriptions"),
    Route("subscribe", "POST", "/subscriptions"),
    Route("unsubscribe", "DELETE", "/subscriptions/{id}"),
    Route("submit_issue", "POST", "/issues"),
    Route("get_issue_status", "GET", "/issues/{id}"),
    Route("add_issue_message", "POST", "/issues/{id}/messages"),
    Route("list_issues", "GET", "/issues"),
    Route("triage_issue", "POST", "/issues/{id}/triage"),
    # A person's Inbox, with a personal access token that may decide it (accounts.access).
    Route("list_inbox", "GET", "/inbox"),
    Route("decide_inbox_item", "POST", "/inbox/{id}/decide"),
    Route("answer_question", "POST", "/questions/{id}/answer"),
    Route("discover_sign_in", "GET", "/.well-known/oauth-protected-resource/api/mcp", external=True),
)


def route_for(call: Call) -> Route:
    """The route a hint's call names: the tool's first route whose path arguments it gives."""
    for route in ROUTES:
        if route.tool == call.tool and route.fits(call.args):
            return route
    raise LookupError(f"no REST route for {call.tool} {dict(call.args)}")


def as_rest(call: Call) -> str:
    return route_for(call).render(call.args)


def hint_lines(hint: Hint) -> list[str]:
    """A hint's marker lines with every call written as its REST call."""
    if hint.marker == "Done":
        return ["Done."]
    if hint.marker == "Wait":
        tail = f"; check again with {as_rest(hint.call)}" if hint.call else ""
        return [f"Wait: {hint.condition}{tail}"]
    assert hint.call is not None, f"{hint.marker} hint needs a call"
    lines = [f"{hint.marker}: {as_rest(hint.call)}"]
    if hint.fallback is not None:
        lines.append(f"Or: {as_rest(hint.fallback)}")
    return lines


def hint_json(hint: Hint) -> dict[str, Any]:
    """`_next_action` (and `_or_action`) of a REST response."""
    lines = hint_lines(hint)
    return {"_next_action": lines[0], **({"_or_action": lines[1]} if len(lines) > 1 else {})}


_REST_LINE = re.compile(
    r"^(?P<method>GET|POST|PATCH|DELETE) (?P<path>/[^\s?]*)(?:\?(?P<query>\S*))?(?: (?P<body>\{.*\}))?$"
)


def _matches(route: Route, path: str) -> dict[str, str] | None:
    base = "" if route.external else PREFIX
    found = re.fullmatch(base + _PARAM.sub(lambda m: f"(?P<{m.group(1)}>[^/]+)", route.template), path)
    return {k: unquote(v) for k, v in found.groupdict().items()} if found else None


def call_of(text: str) -> Call | None:
    """The tool call a rendered REST call names (the inverse of `as_rest`); None for other text."""
    line = _REST_LINE.match(text)
    if line is None:
        return None
    method = line["method"]
    given: dict[str, Any] = dict(parse_qsl(line["query"] or "")) if method == "GET" else {}
    if method != "GET":
        given = json.loads(line["body"] or "{}")
    for route in ROUTES:
        path_args = _matches(route, line["path"]) if route.method == method else None
        if path_args is not None:
            return Call(route.tool, {**given, **path_args})
    return None
