"""The REST API over httpx: a tool call goes to the route api/routes.py names for it, so the CLI
never spells a path of its own; an answer carries its exit code and its hint as `weft` commands."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from api.routes import route_for
from cli.hints import cli_lines
from weft.hints import Call

OK, ERROR, USAGE, WAIT, NOT_FOUND, LEASE_LOST, CONFLICT, UNAUTHENTICATED = 0, 1, 2, 3, 4, 5, 6, 7
EXIT_CODES = {
    "invalid_argument": USAGE,
    "idempotency_key_reused": USAGE,
    "attention_queue_full": WAIT,
    "plan_limit_reached": WAIT,
    "forbidden": WAIT,
    "not_found": NOT_FOUND,
    "lease_lost": LEASE_LOST,
    "already_claimed": CONFLICT,
    "already_decided": CONFLICT,
    "conflict": CONFLICT,
    "unauthenticated": UNAUTHENTICATED,
}


@dataclass(frozen=True)
class Answer:
    """One API answer: the JSON payload exactly as sent, and what the CLI makes of it."""

    status: int
    payload: dict[str, Any]

    @property
    def error(self) -> dict[str, Any] | None:
        error = self.payload.get("error")
        return error if isinstance(error, dict) else None

    @property
    def code(self) -> str:
        return str(self.error.get("code", "")) if self.error else ""

    def exit_code(self) -> int:
        """A refusal's code; a success is 0 even when its hint says Wait (a renewed lease says
        "renew within 300 seconds"), so `set -e` scripts go on and read the marker."""
        return EXIT_CODES.get(self.code, ERROR) if self.error else OK

    def hint_lines(self) -> list[str]:
        rest = [self.payload.get(key) for key in ("_next_action", "_or_action")]
        return cli_lines([line for line in rest if isinstance(line, str)])

    def text(self) -> str:
        """The body as `key: value` lines, the `Error:` line, then the markers as `weft` commands."""
        body = {k: v for k, v in self.payload.items() if k not in ("_next_action", "_or_action", "error")}
        lines = [f"{key}: {_compact(value)}" for key, value in body.items()]
        if self.error:
            lines.append(f"Error: {self.code} — {self.error.get('message', '')}")
        return "\n".join([*lines, *self.hint_lines()])


def _compact(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, separators=(", ", ": "))
    return text.replace("\n", "\\n")


class Client:
    """The API at `base_url` with a bearer token; `renew` gives a fresh token after a 401, once."""

    def __init__(
        self,
        base_url: str,
        token: str | None,
        *,
        timeout: float = 30.0,
        renew: Callable[[], str | None] | None = None,
    ) -> None:
        headers = {"authorization": f"Bearer {token}"} if token else {}
        self.http = httpx.Client(base_url=base_url, headers=headers, timeout=timeout)
        self.renew = renew

    def call(self, tool: str, args: dict[str, Any] | None = None) -> Answer:
        call = Call(tool, {k: v for k, v in (args or {}).items() if v is not None})
        route = route_for(call)
        response = self._send(route.method, route.path(call.args), route.rest_args(call.args))
        if response.status_code == 401 and self.renew is not None:
            token, self.renew = self.renew(), None
            if token:
                self.http.headers["authorization"] = f"Bearer {token}"
                response = self._send(route.method, route.path(call.args), route.rest_args(call.args))
        try:
            payload = response.json()
        except ValueError:
            payload = {"error": {"code": "internal_error", "message": f"HTTP {response.status_code}"}}
        return Answer(response.status_code, payload if isinstance(payload, dict) else {"result": payload})

    def _send(self, method: str, path: str, rest: dict[str, Any]) -> httpx.Response:
        if method == "GET":
            return self.http.get(path, params=rest)
        return self.http.request(method, path, json=rest)

    def close(self) -> None:
        self.http.close()


def emit(answer: Answer, *, as_json: bool) -> int:
    """Print the answer (the payload as sent with --json) and return its exit code."""
    print(json.dumps(answer.payload, indent=2, sort_keys=True) if as_json else answer.text(), flush=True)
    return answer.exit_code()
