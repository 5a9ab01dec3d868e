"""PURE: tools/list's JSON Schemas in fewer characters, meaning the same: no generated titles, nullable
scalars as one type list, no null defaults (tests/issues/test_tool_list_size.py holds the budget)."""

from __future__ import annotations

from typing import Any


def untitled(schema: Any) -> Any:
    """A JSON Schema without the `title` annotations pydantic generates ("Id", "get_taskArguments").

    They change no validation and repeat names the schema already has; a property that is
    itself named `title` is kept.
    """
    if isinstance(schema, list):
        return [untitled(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in {"properties", "$defs"} and isinstance(value, dict):
            out[key] = {name: untitled(sub) for name, sub in value.items()}
        else:
            out[key] = untitled(value)
    return out


# What a nullable scalar's non-null branch may hold to be written as `"type": [kind, "null"]`: no
# enum or const, which would have to learn null too.
_NULLABLE_KEYS = frozenset(
    {"type", "maxLength", "minLength", "maximum", "minimum", "format", "items", "maxItems", "minItems"}
)


def compact(schema: Any) -> Any:
    """The same schema in fewer characters: `anyOf [X, null]` as X with `"type": [kind, "null"]`,
    and no `"default": null` (an optional property's absence from `required` already says it)."""
    if isinstance(schema, list):
        return [compact(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: compact(value) for key, value in schema.items() if not (key == "default" and value is None)}
    options = out.get("anyOf")
    if isinstance(options, list) and len(options) == 2 and {"type": "null"} in options:
        other = options[1] if options[0] == {"type": "null"} else options[0]
        if isinstance(other, dict) and isinstance(other.get("type"), str) and set(other) <= _NULLABLE_KEYS:
            del out["anyOf"]
            out = {**other, **out, "type": [other["type"], "null"]}
    return out
