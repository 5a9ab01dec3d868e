"""One REST answer per outcome: a result's payload with its hint as REST calls, or the error
body `{"error": {code, message, details}, "_next_action"}` with an honest status and headers.

Every exception a request can meet ends here: WeftError as it is, DRF's own refusals
(authentication, method, media type, JSON) as the codes the other surfaces use, and anything
else as `unavailable` or `internal_error` with a request id, never a bare 500 page.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.utils import timezone
from rest_framework import exceptions
from rest_framework.response import Response

from api.arguments import TooLarge
from api.auth import InsufficientScope, challenge
from api.routes import hint_json
from weft.errors import REST_STATUS, WeftError, invalid_argument
from weft.hints import Hint, fix, wait
from weft.mcp.failures import failure_error

# The read that shows how to sign in again: the protected resource's metadata names the
# authorization server that issues new tokens.
SIGN_IN = fix("discover_sign_in")


def result_response(result: Any, *, status: int = 200) -> Response:
    return Response({**result.payload(), **hint_json(result.hint)}, status=status)


def error_body(error: WeftError) -> dict[str, Any]:
    return {
        "error": {"code": error.code, "message": error.message, "details": error.details},
        **hint_json(error.fix),
    }


def _retry_after(error: WeftError) -> str | None:
    """Seconds until the same call may work: the hint's time, the plan's reset, a few seconds."""
    if error.code == "attention_queue_full":
        return "600"
    if error.code == "plan_limit_reached" and error.details.get("resets_at"):
        resets = datetime.fromisoformat(str(error.details["resets_at"]))
        if resets.tzinfo is None:
            resets = resets.replace(tzinfo=timezone.get_current_timezone())
        return str(max(1, math.ceil((resets - timezone.now()).total_seconds())))
    if error.code == "rate_limited":
        return str(error.details["retry_after"])
    if error.code in {"unavailable", "conflict"}:
        return "5"
    return None


def error_response(error: WeftError, *, headers: dict[str, str] | None = None) -> Response:
    headers = dict(headers or {})
    retry = _retry_after(error)
    if retry is not None:
        headers["Retry-After"] = retry
    if error.code == "unauthenticated":
        headers.setdefault("WWW-Authenticate", challenge("invalid_token"))
    return Response(error_body(error), status=REST_STATUS.get(error.code, 400), headers=headers)


def unauthenticated(message: str) -> WeftError:
    return WeftError("unauthenticated", message, fix=SIGN_IN)


def _drf_error(exc: exceptions.APIException, fallback: Hint) -> tuple[WeftError, dict[str, str]]:
    detail = str(exc.detail)
    if isinstance(exc, exceptions.NotAuthenticated):
        return unauthenticated("this call carries no bearer token"), {"WWW-Authenticate": challenge(None)}
    if isinstance(exc, exceptions.AuthenticationFailed):
        return unauthenticated(detail), {"WWW-Authenticate": challenge("invalid_token")}
    if isinstance(exc, InsufficientScope):
        error = WeftError("permission_denied", detail, fix=SIGN_IN)
        return error, {"WWW-Authenticate": challenge("insufficient_scope")}
    if isinstance(exc, exceptions.MethodNotAllowed):
        return WeftError("method_not_allowed", detail, fix=fallback), {}
    if isinstance(exc, exceptions.UnsupportedMediaType):
        message = "send the arguments as a JSON object with Content-Type: application/json"
        return WeftError("unsupported_media_type", message, fix=fallback), {}
    if isinstance(exc, exceptions.ParseError):
        return invalid_argument("body", f"not a JSON object: {detail}", fix_hint=fallback), {}
    if isinstance(exc, exceptions.Throttled):
        return WeftError("conflict", detail, fix=wait("a few seconds pass", "get_my_work")), {}
    return invalid_argument("request", detail, fix_hint=fallback), {}


def exception_response(exc: Exception, *, fallback: Hint) -> Response:
    """The answer to anything a request raised; `fallback` is the read that shows what is valid."""
    if isinstance(exc, WeftError):
        return error_response(exc)
    if isinstance(exc, RequestDataTooBig):
        return error_response(TooLarge(fallback))
    if isinstance(exc, exceptions.APIException):
        error, headers = _drf_error(exc, fallback)
        return error_response(error, headers=headers)
    return error_response(failure_error(exc, "REST call"))
