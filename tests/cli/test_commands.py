"""Every call a hint can name is a `weft` command, and its arguments read back as they were
written (`Call.as_cli()` → the CLI's flags); REST marker lines turn into the same `weft` lines."""

from __future__ import annotations

import shlex

from api.operations import tools
from api.routes import ROUTES, as_rest, hint_lines
from cli.app import parser
from cli.hints import cli_line
from cli.tools import COMMANDS, flag_key, tool_args
from weft.hints import Call, Hint, next_, wait


def test_it_has_a_command_for_every_tool_a_hint_can_name() -> None:
    choices = set(parser()._subparsers._group_actions[0].choices or ())  # type: ignore[union-attr]
    for route in ROUTES:
        assert route.tool.replace("_", "-") in choices
        assert COMMANDS[route.tool.replace("_", "-")] == route.tool


def test_it_reads_every_argument_back_under_its_own_name() -> None:
    for tool in tools().values():
        for name in tool.parameters.get("properties", {}):
            written = Call(tool.name, {name: "x"}).as_cli()
            assert flag_key(shlex.split(written)[2][2:]) == name, (tool.name, name)


def test_it_reads_values_back_as_they_were_written() -> None:
    args = {"runId": "r-1", "leaseToken": "t", "options": ["a b", "c"], "note": "it's fine"}
    written = Call("request_input", args).as_cli()
    assert tool_args(shlex.split(written)[2:]) == args


def test_it_renders_rest_markers_as_weft_commands() -> None:
    hint = next_("start_task", {"id": 7}, fallback=Call("get_task", {"id": 7}))
    assert [cli_line(line) for line in hint_lines(hint)] == hint.lines(cli=True)
    waiting = wait("a person answers", "get_my_work")
    assert cli_line(hint_lines(waiting)[0]) == waiting.lines(cli=True)[0]
    fixed = Hint("Fix", Call("search", {"query": "a&b c", "limit": 5}))
    assert cli_line(f"Fix: {as_rest(fixed.call)}") == "Fix: weft search --limit 5 --query 'a&b c'"  # type: ignore[arg-type]
