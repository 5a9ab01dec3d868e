"""A REST request's arguments: gathered from the path, the query and the JSON body, then checked
by the tool's own signature; a refusal carries the same `Fix:` the MCP tool would give.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE as MAX_BODY_BYTES
from pydantic import ValidationError
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser
from rest_framework.request import Request

from boards.limits import nul_path, without_nul
from weft.errors import WeftError, invalid_argument
from weft.hints import Hint
from weft.mcp.fixes import corrected_call, fallback_read, field_name, parse_field, value_at

NUL_REASON = "must not contain NUL (\\u0000) characters"


def max_body_bytes() -> int:
    """The smaller of the MCP transport's bound and Django's, so both surfaces take the same bodies
    up to it and neither answers a bare 413."""
    return min(MAX_BODY_BYTES, settings.DATA_UPLOAD_MAX_MEMORY_SIZE or MAX_BODY_BYTES)


class TooLarge(WeftError):
    def __init__(self, fix_hint: Hint) -> None:
        limit = max_body_bytes()
        super().__init__(
            "payload_too_large",
            f"the body is over {limit} bytes; send less (every text argument has a limit)",
            details={"field": "body", "reason": "too_large", "maximumBytes": limit},
            fix=fix_hint,
        )


class BoundedJSONParser(JSONParser):
    """JSON bodies of at most MAX_BODY_BYTES, read no further than that; an empty body is {}."""

    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        view = (parser_context or {}).get("view")
        tool = view.tool_name() if view is not None else "get_my_work"
        data = stream.read(max_body_bytes() + 1) if stream is not None else b""
        if len(data) > max_body_bytes():
            raise TooLarge(fallback_read(tool))
        if not data.strip():
            return {}
        try:
            text = data.decode("utf-8")
            parsed = json.loads(text)
            if "\\u" in text:
                # An escaped half of a surrogate pair alone is no character: PostgreSQL cannot
                # store it, and MCP's parser refuses it too.
                json.dumps(parsed, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise ParseError("JSON parse error - a \\uD800-\\uDFFF escape without its pair") from None
        except RecursionError:
            raise ParseError("JSON parse error - arrays or objects nested too deeply") from None
        except (ValueError, UnicodeDecodeError) as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
        return parsed


def gather(request: Request, path_args: dict[str, str], *, tool: str) -> dict[str, Any]:
    """One argument object: the query's single values (GET) or the body's object, and the path."""
    if request.method == "GET":
        args: dict[str, Any] = {}
        for name, values in request.query_params.lists():
            if len(values) != 1:
                raise invalid_argument(name, "give it once", fix_hint=fallback_read(tool))
            args[name] = values[0]
    else:
        data = request.data
        if not isinstance(data, dict):
            raise invalid_argument("body", "must be a JSON object", fix_hint=fallback_read(tool))
        args = dict(data)
    return {**args, **path_args}


def known_query(tool: Tool, args: dict[str, Any]) -> None:
    """A GET names only the tool's parameters: an unknown one is refused (it would be ignored
    silently), and the Fix: is the same call without it."""
    unknown = [name for name in args if name not in tool.parameters.get("properties", {})]
    if unknown:
        errors = [{"loc": (name,), "type": "extra_forbidden"} for name in unknown]
        hint = fix_for(tool, args, errors)
        raise invalid_argument(unknown[0], "not a parameter of this call", fix_hint=hint)


def _errors(tool: Tool, args: dict[str, Any]) -> list[dict[str, Any]]:
    try:
        tool.fn_metadata.validate_arguments(args)
    except ValidationError as exc:
        return [dict(e) for e in exc.errors()]
    return []


def fix_for(tool: Tool, args: dict[str, Any], errors: list[dict[str, Any]]) -> Hint:
    return corrected_call(
        tool.name,
        args,
        errors,
        validate=tool.fn_metadata.validate_arguments,
        required=set(tool.parameters.get("required", [])),
    )


def checked(tool: Tool, args: dict[str, Any]) -> dict[str, Any]:
    """The validated arguments, or invalid_argument with the corrected call (or the read)."""
    nul = nul_path(args)
    if nul is not None:
        # PostgreSQL's text and jsonb cannot hold NUL: refused before anything is stored.
        hint = fix_for(tool, args, _errors(tool, without_nul(args)))
        raise invalid_argument(field_name(nul), NUL_REASON, fix_hint=hint)
    try:
        return tool.fn_metadata.validate_arguments(args)
    except ValidationError as exc:
        errors = [dict(e) for e in exc.errors()]
    first: dict[str, Any] = errors[0] if errors else {"loc": (), "msg": "invalid"}
    raise invalid_argument(
        field_name(tuple(first.get("loc", ()))),
        str(first.get("msg", "invalid")),
        fix_hint=fix_for(tool, args, errors),
    )


def with_limit_fix(tool: Tool, args: dict[str, Any], error: WeftError) -> WeftError:
    """A service's limit refusal answers with the same call cut to the limit, as MCP's does."""
    if error.code != "invalid_argument" or error.details.get("problem") != "too_long":
        return error
    loc = parse_field(str(error.details.get("field", "")))
    try:
        value = value_at(args, loc)
    except (KeyError, IndexError, TypeError):
        return error
    kind = "string_too_long" if isinstance(value, str) else "too_long"
    hint = fix_for(
        tool, args, [{"loc": loc, "type": kind, "ctx": {"max_length": error.details.get("limit")}}]
    )
    return WeftError(error.code, error.message, details=error.details, fix=hint)
