"""The OpenAPI document of the REST API (drf-spectacular, OpenAPI 3.1), from the same signatures
the endpoints check: each operation's parameters and body are its tool's input schema, its
success answer the tool's output schema, and every error the one error body."""

from __future__ import annotations

import copy
from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiParameter

HINT = {"type": "string", "description": "The one next action (Next:, Wait:, Fix: or Done.), as a REST call."}
HINTED: dict[str, Any] = {
    "type": "object",
    "properties": {"_next_action": HINT, "_or_action": {**HINT, "description": "The Or: fallback."}},
    "required": ["_next_action"],
    "additionalProperties": True,
}
ERROR: dict[str, Any] = {
    "type": "object",
    "properties": {
        "error": {
            "type": "object",
            "properties": {
                "code": {"type": "string", "description": "not_found, invalid_argument, lease_lost, …"},
                "message": {"type": "string"},
                "details": {"type": "object", "additionalProperties": True},
            },
            "required": ["code", "message", "details"],
        },
        "_next_action": {**HINT, "description": "The Fix: or Wait: line that remedies the error."},
    },
    "required": ["error", "_next_action"],
}
ERROR_STATUSES = {
    401: "No valid bearer token (WWW-Authenticate names the sign-in)",
    403: "Forbidden for agents, missing scope, or a suspended workspace",
    404: "No such object in this workspace",
    405: "Method not allowed on this path",
    409: "already_claimed, lease_lost or a conflict",
    413: "The body is too large",
    415: "The body is not JSON",
    422: "invalid_argument (the Fix: line is the corrected call) or a reused Idempotency-Key",
    429: "attention_queue_full or plan_limit_reached (Retry-After)",
}


def inlined(schema: Any, defs: dict[str, Any] | None = None) -> Any:
    """A pydantic JSON schema with its `$defs` references inlined (they would not resolve at the
    document's root)."""
    if defs is None:
        schema = copy.deepcopy(schema)
        defs = schema.pop("$defs", {})
    if isinstance(schema, dict):
        ref = schema.get("$ref", "")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            return inlined(defs[ref.removeprefix("#/$defs/")], defs)
        return {k: inlined(v, defs) for k, v in schema.items() if k != "title"}
    if isinstance(schema, list):
        return [inlined(v, defs) for v in schema]
    return schema


class RouteSchema(AutoSchema):
    """An operation's schema from its route's tool."""

    def _route(self) -> Any:
        return self.view.routes[self.method]

    def _tool(self) -> Any:
        from api.operations import tools

        return tools()[self._route().tool]

    def _inputs(self) -> dict[str, Any]:
        return inlined(self._tool().parameters)

    def get_operation_id(self) -> str:
        return str(self._route().operation_id)

    def get_description(self) -> str:
        return str(self._tool().description or "")

    def get_tags(self) -> list[str]:
        return [self._route().template.strip("/").split("/")[0] or "api"]

    def get_override_parameters(self) -> list[Any]:
        inputs, route = self._inputs(), self._route()
        required = set(inputs.get("required", []))
        parameters = []
        for name, schema in inputs.get("properties", {}).items():
            if name in route.path_args:
                parameters.append(OpenApiParameter(name, schema, OpenApiParameter.PATH, required=True))
            elif route.method == "GET":
                query = _non_null(schema)
                parameters.append(
                    OpenApiParameter(name, query, OpenApiParameter.QUERY, required=name in required)
                )
        if route.method != "GET":
            parameters.append(
                OpenApiParameter(
                    "Idempotency-Key",
                    {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[\\x20-\\x7e]+$"},
                    OpenApiParameter.HEADER,
                    description="Send a retried write with the same key: it answers as the first did.",
                )
            )
        return parameters

    def get_request_serializer(self) -> Any:
        route = self._route()
        if route.method == "GET":
            return None
        inputs = self._inputs()
        body = {
            "type": "object",
            "properties": {k: v for k, v in inputs.get("properties", {}).items() if k not in route.path_args},
            "required": [k for k in inputs.get("required", []) if k not in route.path_args],
        }
        return {"application/json": body}

    def get_response_serializers(self) -> Any:
        output = self._tool().output_schema
        success = inlined(output) if output else HINTED
        status = 201 if self._route().tool in ("create_task", "subscribe") else 200
        return {status: success, **{code: ERROR for code in ERROR_STATUSES}}


def _non_null(schema: dict[str, Any]) -> dict[str, Any]:
    """A query parameter's schema without its null branch (a query cannot send null: leave it out)."""
    options = schema.get("anyOf")
    if isinstance(options, list):
        rest = [o for o in options if o.get("type") != "null"]
        if len(rest) == 1:
            return {**{k: v for k, v in schema.items() if k not in ("anyOf", "default")}, **rest[0]}
    return schema


class BearerScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    target_class = "api.auth.AgentTokenAuthentication"
    name = "bearer"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "The agent's OAuth access token (the same as for /api/mcp).",
        }


class PersonalTokenScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    target_class = "api.auth.PersonalTokenAuthentication"
    name = "personalToken"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A person's access token (wpat_…), made on the workspace's Tokens page.",
        }
