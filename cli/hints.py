"""A REST answer's marker lines rendered as `weft` commands: each REST call is read back as the tool
call it names (api/routes.py, the one route table) and written with `Call.as_cli()`."""

from __future__ import annotations

from api.routes import call_of

_AGAIN = "; check again with "


def cli_line(line: str) -> str:
    """`Next: POST /api/v1/tasks/3/start {}` → `Next: weft start-task --id 3`; Wait's call too."""
    marker, sep, rest = line.partition(": ")
    if not sep:
        return line
    if marker == "Wait":
        condition, again, target = rest.rpartition(_AGAIN)
        call = call_of(target) if again else None
        return f"Wait: {condition}{_AGAIN}{call.as_cli()}" if call else line
    call = call_of(rest)
    return f"{marker}: {call.as_cli()}" if call else line


def cli_lines(lines: list[str]) -> list[str]:
    return [cli_line(line) for line in lines]
