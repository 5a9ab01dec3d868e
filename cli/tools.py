"""Every tool as a command of its own name (`weft start-task --id 3`): the commands hints name.

`Call.as_cli()` writes an argument `runId` as `--run-id` and `guest_token` as `--guest-token`; a
flag is read back as camelCase unless it is one of the tools' few snake_case parameters.
"""

from __future__ import annotations

import json
from typing import Any

from api.routes import ROUTES

SNAKE_KEYS = frozenset({"reporter_git_sha", "reporter_app_version", "entity_ids_to_link", "guest_token"})
COMMANDS = {route.tool.replace("_", "-"): route.tool for route in ROUTES}


class UsageError(Exception):
    """The command line is wrong (exit 2)."""


def flag_key(flag: str) -> str:
    """`run-id` → `runId`, `guest-token` → `guest_token`."""
    snake = flag.replace("-", "_")
    if snake in SNAKE_KEYS:
        return snake
    first, *rest = flag.split("-")
    return first + "".join(part[:1].upper() + part[1:] for part in rest)


def flag_value(text: str) -> Any:
    """What `as_cli` wrote: JSON for lists and objects, True/False for booleans, else the text."""
    if text[:1] in "[{":
        try:
            return json.loads(text)
        except ValueError:
            return text
    return {"True": True, "False": False, "true": True, "false": False}.get(text, text)


def tool_args(argv: list[str]) -> dict[str, Any]:
    """`--id 3 --note 'x'` → {"id": "3", "note": "x"}; `--flag=value` works too."""
    args: dict[str, Any] = {}
    items = iter(argv)
    for item in items:
        if not item.startswith("--") or item == "--":
            raise UsageError(f"expected --name value, got {item!r}")
        name, eq, value = item[2:].partition("=")
        if not eq:
            value = next(items, None)  # type: ignore[assignment]
            if value is None:
                raise UsageError(f"--{name} needs a value")
        args[flag_key(name)] = flag_value(value)
    return args
