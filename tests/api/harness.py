"""REST helpers for tests: an async client over weft.asgi (beside the MCP client), and a hint
line read back as the REST call it names and as the tool call it means."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

import httpx

from api.routes import PREFIX, ROUTES

_LINE = re.compile(r"^(?P<method>GET|POST|PATCH|DELETE) (?P<target>/\S*)(?: (?P<body>\{.*\}))?$")


@dataclass(frozen=True)
class RestCall:
    method: str
    path: str
    query: dict[str, str] = field(default_factory=dict)
    body: dict[str, Any] | None = None

    def tool(self) -> tuple[str, dict[str, Any]]:
        """The tool and arguments this REST call means (the inverse of the route table)."""
        for route in ROUTES:
            pattern = re.sub(r"{([A-Za-z]+)}", r"(?P<\1>[^/]+)", route.template)
            base = "" if route.external else PREFIX
            match = re.fullmatch(base + pattern, self.path)
            if match and route.method == self.method:
                args: dict[str, Any] = {k: unquote(v) for k, v in match.groupdict().items()}
                args.update(self.query if self.method == "GET" else (self.body or {}))
                return route.tool, args
        raise LookupError(f"no route for {self.method} {self.path}")


def rest_call(text: str) -> RestCall | None:
    """`POST /api/v1/tasks/1/start {}` → RestCall; None when the text is not a REST call."""
    match = _LINE.match(text)
    if not match:
        return None
    parts = urlsplit(match["target"])
    body = json.loads(match["body"]) if match["body"] else None
    if match["method"] != "GET" and body is None:
        return None
    return RestCall(match["method"], parts.path, dict(parse_qsl(parts.query)), body)


def hinted(line: str) -> tuple[str, RestCall | None]:
    """A marker line's marker and the REST call it names (Wait: its `check again with` call)."""
    if line == "Done.":
        return "Done", None
    marker, _, body = line.partition(": ")
    if marker == "Wait":
        body = body.rpartition("; check again with ")[2] if "; check again with " in body else ""
    return marker, rest_call(body) if body else None


class AsyncApi:
    """The REST API through the ASGI application, as uvicorn serves it."""

    def __init__(self, client: httpx.AsyncClient, token: str | None) -> None:
        self.client = client
        self.token = token

    async def call(self, method: str, path: str, body: Any = None, **headers: str) -> httpx.Response:
        sent = {"authorization": f"Bearer {self.token}"} if self.token else {}
        sent.update(headers)
        url = path if path.startswith("/") else f"{PREFIX}/{path}"
        if method == "GET":
            return await self.client.get(url, params=body or {}, headers=sent)
        return await self.client.request(method, url, json=body if body is not None else {}, headers=sent)

    async def run(self, call: RestCall) -> httpx.Response:
        return await self.call(call.method, call.path, call.query if call.method == "GET" else call.body)
