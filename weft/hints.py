"""The hint contract: every response ends with one deterministic next action.

A `Hint` is a value: a marker (Next, Wait, Done, Fix), the complete call it recommends
(tool name and real arguments), and for Wait the condition to wait for. `Next` may carry
one `Or` fallback. Renderers turn a hint into MCP/REST text lines, the JSON `_next_action`
field and CLI text; `problems()` checks a rendered response against the five rules.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

Marker = Literal["Next", "Wait", "Done", "Fix"]
MARKERS = ("Next:", "Or:", "Wait:", "Done.", "Fix:")


@dataclass(frozen=True)
class Call:
    """A complete tool call with real arguments."""

    tool: str
    args: Mapping[str, Any] = field(default_factory=dict)

    def as_text(self) -> str:
        return f"{self.tool} {json.dumps(dict(self.args), sort_keys=True, separators=(', ', ': '))}"

    def as_cli(self) -> str:
        parts = ["weft", self.tool.replace("_", "-")]
        for key in sorted(self.args):
            value = self.args[key]
            if isinstance(value, (list, dict)):
                value = json.dumps(value, separators=(",", ":"))
            parts.append(f"--{_flag(key)} {_shell_quote(str(value))}")
        return " ".join(parts)


def _flag(key: str) -> str:
    """An argument name as a CLI flag: runId → run-id, lease_token → lease-token."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"-\1", key).replace("_", "-").lower()


def _shell_quote(value: str) -> str:
    if re.fullmatch(r"[A-Za-z0-9_.:/@%+=-]+", value):
        return value
    return "'" + value.replace("'", "'\"'\"'") + "'"


@dataclass(frozen=True)
class Hint:
    marker: Marker
    call: Call | None = None
    condition: str = ""
    fallback: Call | None = None

    def lines(self, *, cli: bool = False) -> list[str]:
        """The marker lines that end a response."""
        render = (lambda c: c.as_cli()) if cli else (lambda c: c.as_text())
        if self.marker == "Done":
            return ["Done."]
        if self.marker == "Wait":
            tail = f"; check again with {render(self.call)}" if self.call else ""
            return [f"Wait: {self.condition}{tail}"]
        assert self.call is not None, f"{self.marker} hint needs a call"
        first = f"{self.marker}: {render(self.call)}"
        if self.fallback is not None:
            return [first, f"Or: {render(self.fallback)}"]
        return [first]

    def as_json(self) -> dict[str, Any]:
        """The JSON fields: `_next_action` (and `_or_action` when a fallback exists)."""
        lines = self.lines()
        payload: dict[str, Any] = {"_next_action": lines[0]}
        if len(lines) > 1:
            payload["_or_action"] = lines[1]
        return payload


def next_(tool: str, args: Mapping[str, Any] | None = None, *, fallback: Call | None = None) -> Hint:
    return Hint("Next", Call(tool, dict(args or {})), fallback=fallback)


def wait(condition: str, tool: str | None = None, args: Mapping[str, Any] | None = None) -> Hint:
    return Hint("Wait", Call(tool, dict(args or {})) if tool else None, condition=condition)


def fix(tool: str, args: Mapping[str, Any] | None = None) -> Hint:
    return Hint("Fix", Call(tool, dict(args or {})))


DONE = Hint("Done")


def render_text(body: str, hint: Hint, *, error: str | None = None, cli: bool = False) -> str:
    """Text content: the body, then `Error:` (for errors) and the marker lines last."""
    lines = [_inert(line) for line in body.rstrip().split("\n")] if body.strip() else []
    if error is not None:
        lines.append(f"Error: {one_line(error)}")
    lines.extend(hint.lines(cli=cli))
    return "\n".join(lines)


def one_line(text: str) -> str:
    """Text that may hold caller-given values, kept on one line (line breaks shown as \\n)."""
    return text.replace("\r", "\\r").replace("\n", "\\n")


def _inert(line: str) -> str:
    """A body line that would read as a marker (a task titled "Next: …") is indented, so only the
    server's own marker lines end a response."""
    return f"  {line}" if line.startswith((*MARKERS, "Error: ")) else line


_PLACEHOLDER = re.compile(r"<[A-Za-z_ -]+>|\b[A-Z]+-N+\b|\.\.\.|\bTODO\b|\bXXX\b")
_CALL = re.compile(r"^(?P<tool>[a-z][a-z0-9_]*) (?P<args>\{.*\})$")
_CLI_CALL = re.compile(r"^weft [a-z][a-z0-9-]*( --[a-z0-9-]+ \S.*)*$")


def has_placeholder(text: str) -> bool:
    """True when `text` would read as a placeholder in a hint (generated values must avoid this)."""
    return bool(_PLACEHOLDER.search(text))


def marker_lines(text: str) -> list[str]:
    """The trailing run of marker lines (and the `Error:` line before them)."""
    lines = text.rstrip().split("\n")
    tail: list[str] = []
    for line in reversed(lines):
        if line.startswith(MARKERS):
            tail.append(line)
        elif line.startswith("Error: ") and tail:
            tail.append(line)
            break
        else:
            break
    return list(reversed(tail))


def problems(text: str, payload: Mapping[str, Any] | None = None, *, cli: bool = False) -> list[str]:
    """Every way a rendered response breaks the five rules; empty when it keeps them."""
    tail = marker_lines(text)
    markers = [line for line in tail if not line.startswith("Error: ")]
    if not markers:
        return ["presence: the text does not end with a marker line"]
    has_error = any(line.startswith("Error: ") for line in tail)
    found = _sequence_problems([line.split(":", 1)[0].rstrip(".") for line in markers], has_error=has_error)
    for line in markers:
        found.extend(_line_problems(line, cli=cli))
    if payload is not None:
        found.extend(_payload_problems(payload, markers))
    return found


def _sequence_problems(kinds: list[str], *, has_error: bool) -> list[str]:
    """Determinism and conditionality: which marker kinds may end a response, in which order."""
    found = []
    if kinds.count("Next") > 1:
        found.append("determinism: more than one Next:")
    if "Done" in kinds and len(kinds) > 1:
        found.append("conditionality: Done. is paired with another marker")
    if "Or" in kinds and kinds[:2] != ["Next", "Or"]:
        found.append("conditionality: Or: without a Next: before it")
    if len(kinds) > 2 or (len(kinds) == 2 and kinds != ["Next", "Or"]):
        found.append(f"determinism: more than one next action {kinds}")
    if "Fix" in kinds and not has_error:
        found.append("conditionality: Fix: without an Error: line")
    return found


def _line_problems(line: str, *, cli: bool) -> list[str]:
    """Actionability of one marker line: a body without placeholders, and a complete call to act on."""
    if line == "Done.":
        return []
    body = line.split(": ", 1)[1] if ": " in line else ""
    if not body:
        return [f"actionability: empty marker line {line!r}"]
    found = []
    if _PLACEHOLDER.search(body):
        found.append(f"actionability: placeholder in {line!r}")
    if line.startswith(("Next:", "Or:", "Fix:")):
        found.extend(_call_problems(line, body, cli=cli))
    return found


def _call_problems(line: str, body: str, *, cli: bool) -> list[str]:
    """A Next:/Or:/Fix: body is a whole CLI call or a tool name with JSON arguments."""
    if cli:
        return [] if _CLI_CALL.match(body) else [f"actionability: not a complete CLI call {line!r}"]
    match = _CALL.match(body)
    if not match:
        return [f"actionability: not a complete call {line!r}"]
    try:
        json.loads(match["args"])
    except ValueError:
        return [f"actionability: arguments are not JSON in {line!r}"]
    return []


def _payload_problems(payload: Mapping[str, Any], markers: list[str]) -> list[str]:
    """Consistency: the JSON's `_next_action` and `_or_action` say what the marker lines say."""
    if "_next_action" not in payload:
        return ["presence: JSON has no _next_action"]
    found = []
    expected = markers[0]
    actual = payload["_next_action"]
    if not (actual == expected or (actual is None and expected == "Done.")):
        found.append(f"consistency: _next_action {actual!r} != text {expected!r}")
    if len(markers) > 1 and payload.get("_or_action") != markers[1]:
        found.append("consistency: _or_action does not match the Or: line")
    if len(markers) == 1 and payload.get("_or_action"):
        found.append("consistency: _or_action without an Or: line")
    return found


class Renderable(Protocol):
    """What every service and selector result offers a surface."""

    @property
    def hint(self) -> Hint: ...

    def payload(self) -> dict[str, Any]: ...

    def summary(self) -> str: ...


def render(result: Renderable, *, cli: bool = False) -> tuple[str, dict[str, Any]]:
    """A result's text form (summary, then marker lines) and its JSON form (payload + `_next_action`)."""
    return render_text(result.summary(), result.hint, cli=cli), {**result.payload(), **result.hint.as_json()}
