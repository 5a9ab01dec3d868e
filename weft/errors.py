"""One error type for every surface, translated once per surface."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from weft.hints import Hint, fix, render_text, wait

# The HTTP status each error code answers with on the web and REST surfaces.
HTTP_STATUS: dict[str, int] = {
    "not_found": 404,
    "invalid_argument": 400,
    "permission_denied": 403,
    "forbidden": 403,
    "already_claimed": 409,
    "lease_lost": 409,
    "already_decided": 409,
    "attention_queue_full": 429,
    "plan_limit_reached": 402,
    # A count cap the workspace is at (not its plan, not a rate): its state conflicts with one more.
    "subscription_limit_reached": 409,
    "workspace_suspended": 403,
    "unauthenticated": 401,
    "conflict": 409,
    "guest_token_expired": 401,
    "guest_token_invalid": 401,
    "intake_limit_reached": 429,
    "rate_limited": 429,
    "pii_detected": 422,
    "unavailable": 503,
    "internal_error": 500,
    "idempotency_key_reused": 422,
    "method_not_allowed": 405,
    "unsupported_media_type": 415,
    "payload_too_large": 413,
}

# The REST API answers these codes with the statuses HTTP APIs use for them; the web pages keep
# HTTP_STATUS (a form error there is a 400 page, a plan cap a 402).
REST_STATUS: dict[str, int] = {**HTTP_STATUS, "invalid_argument": 422, "plan_limit_reached": 429}


class WeftError(Exception):
    """A refusal with a code, a message, details and the one action that fixes it.

    `fix` is a Fix hint (run this at once) or a Wait hint (retry after a condition).
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        details: Mapping[str, Any] | None = None,
        fix: Hint,
    ) -> None:
        super().__init__(f"{code}: {message}")
        assert fix.marker in {"Fix", "Wait"}, "an error's hint is Fix: or Wait:"
        self.code = code
        self.message = message
        self.details: dict[str, Any] = dict(details or {})
        self.fix = fix

    @property
    def http_status(self) -> int:
        return HTTP_STATUS.get(self.code, 400)

    def headline(self) -> str:
        return f"{self.code} — {self.message}"

    def as_text(self, *, cli: bool = False) -> str:
        return render_text("", self.fix, error=self.headline(), cli=cli)

    def as_json(self) -> dict[str, Any]:
        return {
            "error": {"code": self.code, "message": self.message, "details": self.details},
            **self.fix.as_json(),
        }


def not_found(kind: str, ident: object, *, fix_hint: Hint | None = None) -> WeftError:
    """The same answer for a foreign id and a missing one."""
    return WeftError(
        "not_found",
        f"{kind} {ident} does not exist in this workspace",
        details={"kind": kind, "id": str(ident)},
        fix=fix_hint or fix("get_board_state"),
    )


def invalid_argument(field: str, reason: str, *, fix_hint: Hint | None = None) -> WeftError:
    return WeftError(
        "invalid_argument",
        f"{field}: {reason}",
        details={"field": field, "reason": reason},
        fix=fix_hint or fix("get_my_work"),
    )


def unavailable(what: str, *, retry_tool: str = "get_my_work") -> WeftError:
    """A service Weft needs (the database, the cache) did not answer; the same call works later."""
    return WeftError(
        "unavailable",
        f"{what} is not reachable right now",
        details={"service": what},
        fix=wait(f"{what} is reachable again; retry in a few seconds", retry_tool),
    )


def internal_error(request_id: str, *, retry_tool: str = "get_my_work") -> WeftError:
    """An unexpected failure: the request id finds the logged traceback."""
    return WeftError(
        "internal_error",
        f"an unexpected error stopped this call (request {request_id})",
        details={"request_id": request_id},
        fix=wait("the operators look at the logged error; retry in a minute", retry_tool),
    )
