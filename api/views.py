"""The REST endpoints: one view per path, each method serving one tool of api/routes.py.

parse (path, query or JSON body) → check with the tool's signature → idempotency key → the
gate (live connection, active workspace, meter) → the tool's one service or selector → the
payload with its hint as REST calls. No rule lives here.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.http import HttpRequest, JsonResponse
from django.utils import timezone
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.permissions import BasePermission
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.models import AgentConnection
from api import idempotency
from api.arguments import BoundedJSONParser, checked, gather, known_query, with_limit_fix
from api.auth import AUTHENTICATION, ApiCaller
from api.gate import admit
from api.operations import Operation, operation
from api.responses import error_body, error_response, exception_response, result_response
from api.routes import Route
from api.schema import RouteSchema
from weft.errors import WeftError, not_found
from weft.hints import fix
from weft.mcp.fixes import fallback_read

REPLAYED = "Idempotent-Replayed"


class IsCaller(BasePermission):
    def has_permission(self, request: Request, view: Any) -> bool:
        return isinstance(request.auth, ApiCaller)


class JSONOnly(BaseContentNegotiation):
    """Every answer is JSON, whatever the Accept header asks for."""

    def select_parser(self, request: Request, parsers: Any) -> Any:
        for parser in parsers:
            if request.content_type.split(";")[0].strip() in ("", parser.media_type):
                return parser
        return None

    def select_renderer(self, request: Request, renderers: Any, format_suffix: Any = None) -> Any:
        return renderers[0], renderers[0].media_type


class ToolView(APIView):
    """The methods of one path, each mapped to its route (and so to its tool)."""

    routes: dict[str, Route] = {}
    authentication_classes = AUTHENTICATION
    permission_classes = [IsCaller]
    parser_classes = [BoundedJSONParser]
    renderer_classes = [JSONRenderer]
    content_negotiation_class = JSONOnly
    throttle_classes: list[Any] = []
    schema = RouteSchema()

    def tool_name(self) -> str:
        route = self.routes.get(self.request.method or "")
        return route.tool if route is not None else "get_my_work"

    def handle_exception(self, exc: Exception) -> Response:
        return exception_response(exc, fallback=fallback_read(self.tool_name()))

    def get(self, request: Request, **path_args: str) -> Response:
        return self.answer(request, path_args)

    post = patch = delete = get

    def answer(self, request: Request, path_args: dict[str, str]) -> Response:
        route = self.routes.get(request.method or "")
        if route is None:
            self.http_method_not_allowed(request)
        assert route is not None
        op = operation(route.tool)
        raw = gather(request, path_args, tool=route.tool)
        if request.method == "GET":
            known_query(op.tool, raw)
        args = checked(op.tool, raw)
        caller: ApiCaller = request.auth
        key = None
        if request.method != "GET":
            fallback = fallback_read(route.tool)
            key = idempotency.checked_key(request.headers.get(idempotency.HEADER), fix_hint=fallback)
        if key is None:
            return self._run(op, caller, raw, args)
        digest = idempotency.request_hash(request.method or "", request.path, raw)
        fix_hint = fallback_read(route.tool)
        answer = idempotency.key_answer(
            caller=caller, key=key, digest=digest, now=timezone.now(), fix_hint=fix_hint
        )
        if answer is None:
            response = self._run_once(op, caller, raw, args, key, digest)
            if response is not None:
                return response
            # A racing request with this key committed first: its answer.
            answer = idempotency.key_answer(
                caller=caller, key=key, digest=digest, now=timezone.now(), fix_hint=fix_hint
            )
        assert answer is not None
        return Response(answer.body, status=answer.status, headers={REPLAYED: "true"})

    def _run(self, op: Operation, caller: ApiCaller, raw: dict[str, Any], args: dict[str, Any]) -> Response:
        return answer_for(op, admit(caller), raw, args)

    def _run_once(
        self,
        op: Operation,
        caller: ApiCaller,
        raw: dict[str, Any],
        args: dict[str, Any],
        key: str,
        digest: str,
    ) -> Response | None:
        """Run the write once for this key and keep its answer, in one transaction; None when a
        racing request with the key committed first.

        The meter is counted before, on its own (a stored answer's replay is never metered): inside the
        transaction its row lock would queue the workspace's every call behind this write.
        """
        connection = admit(caller)
        with transaction.atomic():
            if not idempotency.key_claim(caller=caller, key=key, digest=digest, now=timezone.now()):
                return None
            response = answer_for(op, connection, raw, args)
            answer = idempotency.Answer(response.status_code, dict(response.data or {}))
            idempotency.key_store(caller=caller, key=key, answer=answer)
        return response


def answer_for(
    op: Operation, connection: AgentConnection, raw: dict[str, Any], args: dict[str, Any]
) -> Response:
    """The tool's service or selector, rendered; its refusal as the error answer."""
    try:
        result = op.run(connection, args)
    except WeftError as error:
        return error_response(with_limit_fix(op.tool, raw, error))
    return result_response(result, status=201 if op.created else 200)


def unknown_path(request: HttpRequest, rest: str) -> JsonResponse:
    """A path under /api/v1/ that names no endpoint: not_found in the one error body."""
    error = not_found("path", request.path, fix_hint=fix("get_my_work"))
    return JsonResponse(error_body(error), status=404)
