"""The `weft` command line: parse → call the API → print the answer → exit with its code.

`--json` prints exactly the API's payload; text ends with the hint's marker lines as `weft`
commands. Exit codes (docs/cli.md): 0 ok, 1 other failure, 2 usage, 3 refused or wait, 4 not
found, 5 lease lost, 6 already claimed or conflict, 7 not signed in.
"""

from __future__ import annotations

import argparse
import sys

import httpx

from cli import commands, login
from cli import run as supervised
from cli.client import USAGE, emit
from cli.tools import COMMANDS, UsageError, tool_args


def _global_flags(argv: list[str]) -> tuple[list[str], str | None, bool]:
    """`--url U` and `--json` anywhere before a `--` (they are every command's)."""
    rest: list[str] = []
    url, as_json = None, False
    items = iter(argv)
    for item in items:
        if item == "--":
            rest.extend([item, *items])
        elif item == "--json":
            as_json = True
        elif item == "--url":
            url = next(items, None)
        elif item.startswith("--url="):
            url = item.partition("=")[2]
        else:
            rest.append(item)
    return rest, url, as_json


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="weft", description="Weft's task loop from a shell or a script.")
    top.add_argument("--url", help="Weft's base URL (else WEFT_URL, else the one saved at login)")
    top.add_argument("--json", action="store_true", help="print exactly the API's JSON payload")
    sub = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    login.add_parsers(sub)
    commands.add_parsers(sub)
    supervised.add_parser(sub)
    for name in sorted(set(COMMANDS) - set(sub.choices)):
        sub.add_parser(name, help=f"the {COMMANDS[name]} tool: --name value per argument")
    return top


def run_cli(argv: list[str]) -> int:
    argv, url, as_json = _global_flags(argv)
    # `search` is both a tool and a loop command; the loop command takes the tool's flags too.
    if argv and argv[0] in COMMANDS and argv[0] != "search":
        args = tool_args(argv[1:])
        with commands.client(url) as api:
            return emit(api.call(COMMANDS[argv[0]], args), as_json=as_json)
    parsed = parser().parse_args(argv)
    parsed.url, parsed.json = url, as_json
    return int(parsed.handler(parsed))


def run(argv: list[str]) -> int:
    try:
        return run_cli(argv)
    except UsageError as exc:
        print(f"weft: {exc}", file=sys.stderr)
        return USAGE
    except (OSError, httpx.HTTPError) as exc:
        print(f"weft: cannot reach Weft: {exc}", file=sys.stderr)
        return 1
