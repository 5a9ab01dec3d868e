"""The `Fix:` line of a refused argument: the same call corrected where the server can know a
valid value, otherwise the read that shows what is valid.

A correction is made only from what the input schema says (a clamp to a bound, a cut to a
length, NUL characters removed, an optional argument left to its default) and is kept only
when the corrected arguments then pass the tool's own validation, so a `Fix:` call never
fails validation again.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from boards.limits import nul_path, without_nul
from weft.hints import Hint, fix, has_placeholder

# The read that shows what is valid, for a call the server cannot correct.
LEASE_TOOLS = frozenset({"report_progress", "request_input", "complete_task", "release_task"})
# An id out of range names nothing: clamping it would only name another row, or none.
ID_ARGUMENTS = frozenset({"id", "boardId"})


def fallback_read(tool: str) -> Hint:
    """Lease-guarded calls: get_my_work lists the held runs with their tokens; the rest: the board."""
    return fix("get_my_work") if tool in LEASE_TOOLS else fix("get_board_state")


def _set(target: Any, path: Sequence[Any], value: Any) -> bool:
    for key in path[:-1]:
        try:
            target = target[key]
        except (KeyError, IndexError, TypeError):
            return False
    try:
        target[path[-1]] = value
    except (KeyError, IndexError, TypeError):
        return False
    return True


def value_at(target: Any, path: Sequence[Any]) -> Any:
    for key in path:
        target = target[key]
    return target


def _correct(args: dict[str, Any], error: Mapping[str, Any], required: set[str]) -> bool:
    """Apply one correction in place; False when the server cannot know a valid value."""
    loc = list(error.get("loc", ()))
    kind = str(error.get("type", ""))
    ctx = error.get("ctx") or {}
    if not loc:
        return False
    top = str(loc[0])
    try:
        current = value_at(args, loc)
    except (KeyError, IndexError, TypeError):
        current = None
    if kind == "extra_forbidden":
        return _drop(args, loc)
    if kind == "string_too_long" and isinstance(current, str):
        return _set(args, loc, current[: int(ctx["max_length"])])
    if kind == "too_long" and isinstance(current, list):
        return _set(args, loc, current[: int(ctx["max_length"])])
    bound = _bound(kind, ctx)
    if bound is not None and top not in ID_ARGUMENTS:
        return _set(args, loc, bound)
    if top not in required and top in args:
        # An optional argument the server cannot repair: leave it to its default.
        del args[top]
        return True
    return False


def _drop(args: dict[str, Any], loc: Sequence[Any]) -> bool:
    try:
        parent = value_at(args, loc[:-1])
        del parent[loc[-1]]
    except (KeyError, IndexError, TypeError):
        return False
    return True


def _bound(kind: str, ctx: Mapping[str, Any]) -> Any:
    """The nearest valid number for a bound error."""
    if kind == "greater_than_equal":
        return ctx.get("ge")
    if kind == "less_than_equal":
        return ctx.get("le")
    if kind == "greater_than" and isinstance(ctx.get("gt"), int):
        return ctx["gt"] + 1
    if kind == "less_than" and isinstance(ctx.get("lt"), int):
        return ctx["lt"] - 1
    return None


def corrected_call(
    tool: str,
    arguments: Mapping[str, Any],
    errors: Sequence[Mapping[str, Any]],
    *,
    validate: Callable[[dict[str, Any]], Any],
    required: set[str],
) -> Hint:
    """`Fix: <tool> <corrected arguments>` when every error can be corrected, else the read."""
    args = copy.deepcopy(dict(arguments))
    if nul_path(args) is not None:
        args = without_nul(args)
    for error in errors:
        if error.get("type") == "nul":
            continue
        if not _correct(args, error, required):
            return fallback_read(tool)
    if args == dict(arguments):
        return fallback_read(tool)
    try:
        validate(args)
    except ValidationError:
        return fallback_read(tool)
    hint = fix(tool, args)
    if has_placeholder(hint.lines()[0]):
        # Caller text that reads as a placeholder ("<id>") cannot stand in a hint.
        return fallback_read(tool)
    return hint


def field_name(loc: Sequence[Any]) -> str:
    """A location as an argument path: artifacts[2].kind."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "arguments"


def parse_field(field: str) -> tuple[Any, ...]:
    """An argument path back to a location: artifacts[2].kind → ("artifacts", 2, "kind")."""
    loc: list[Any] = []
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", field):
        loc.append(int(part[1:-1]) if part.startswith("[") else part)
    return tuple(loc)
