"""The loop's own commands: `weft work`, `task ID`, `board`, `search`, `progress`, `ask`,
`complete`, `release`, `issue submit|status`, each one tool call. The run a command acts on is
the one `weft start` saved, unless `--run-id` and `--lease-token` name another."""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from api.routes import call_of
from cli import config, login
from cli.client import Answer, Client, emit
from cli.tools import UsageError
from weft.hints import Call


@contextlib.contextmanager
def client(url: str | None) -> Iterator[Client]:
    base = config.base_url(url)
    api = Client(base, config.load().get("token"), renew=lambda: login.refreshed(base))
    try:
        yield api
    finally:
        api.close()


def call(parsed: argparse.Namespace, tool: str, args: dict[str, Any]) -> int:
    with client(parsed.url) as api:
        return emit(api.call(tool, args), as_json=parsed.json)


def lease(parsed: argparse.Namespace) -> dict[str, Any]:
    """runId and leaseToken: the flags, else the run `weft start` saved."""
    saved = config.load().get("run") or {}
    run_id = parsed.run_id or saved.get("runId")
    token = parsed.lease_token or saved.get("leaseToken")
    if not run_id or not token:
        raise UsageError("no run: `weft start ID` first, or give --run-id and --lease-token")
    return {"runId": run_id, "leaseToken": token}


def _lease_flags(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p.add_argument("--run-id", help="the run (default: the one `weft start` saved)")
    p.add_argument("--lease-token", help="its lease token (default: the saved one)")
    return p


def _artifacts(parsed: argparse.Namespace) -> list[Any] | None:
    """`--artifact kind=uri` flags and the list in `--artifacts-file FILE` (JSON)."""
    found: list[Any] = []
    if parsed.artifacts_file:
        loaded = json.loads(Path(parsed.artifacts_file).read_text())
        found.extend(loaded if isinstance(loaded, list) else [loaded])
    for item in parsed.artifact or []:
        kind, sep, uri = item.partition("=")
        if not sep:
            raise UsageError(f"--artifact takes kind=uri (url, commit, file, pr), got {item!r}")
        found.append({"kind": kind, "uri": uri})
    return found or None


def complete(parsed: argparse.Namespace) -> int:
    args = {
        **lease(parsed),
        "outcome": parsed.outcome,
        "artifacts": _artifacts(parsed),
        "claims": parsed.claim,
        "notDone": parsed.not_done,
        "unknowns": parsed.unknown,
        "nextStep": parsed.next_step,
        **({"startNext": True} if parsed.start_next else {}),
    }
    with client(parsed.url) as api:
        answer = api.call("complete_task", args)
    following = answer.payload.get("next") or {}
    if following.get("started") and following.get("leaseToken"):
        # The next task's run is the one the following `weft progress` and `weft complete` act on.
        task = following.get("task") or {}
        config.update(
            run={"runId": following["runId"], "leaseToken": following["leaseToken"], "taskId": task.get("id")}
        )
    return emit(answer, as_json=parsed.json)


def ask(parsed: argparse.Namespace) -> int:
    args = {**lease(parsed), "question": parsed.question, "options": parsed.option}
    with client(parsed.url) as api:
        answer = api.call("request_input", args)
        if parsed.wait:
            answer = wait_out(api, answer)
        return emit(answer, as_json=parsed.json)


def wait_out(api: Client, answer: Answer) -> Answer:
    """While the answer says `Wait: …; check again with <call>`, make that call again every few
    seconds, with a spinner on stderr; the first answer that no longer says Wait is the result."""
    spinner = itertools.cycle("|/-\\")
    while (again := _check_again(answer)) is not None:
        sys.stderr.write(f"\r{next(spinner)} {str(answer.payload['_next_action'])[:100]}")
        sys.stderr.flush()
        time.sleep(float(os.environ.get("WEFT_CLI_POLL_SECONDS", "5")))
        answer = api.call(again.tool, dict(again.args))
    sys.stderr.write("\r\n")
    return answer


def _check_again(answer: Answer) -> Call | None:
    line = str(answer.payload.get("_next_action") or "")
    condition, sep, target = line.rpartition("; check again with ")
    return call_of(target) if line.startswith("Wait:") and sep and condition else None


def add_parsers(sub: Any) -> None:
    _simple(sub, "work", "what to do next (get_my_work)", lambda p: call(p, "get_my_work", {}))
    p = _simple(sub, "task", "one task (get_task)", lambda p: call(p, "get_task", {"id": p.id}))
    p.add_argument("id")
    p = _simple(
        sub, "board", "the board (get_board_state)", lambda p: call(p, "get_board_state", {"boardId": p.id})
    )
    p.add_argument("id", nargs="?")
    p = _simple(sub, "search", "find tasks", _search)
    p.add_argument("words", nargs="?", help="what to look for (or --query)")
    p.add_argument("--query")
    p.add_argument("--limit", type=int)
    p = _lease_flags(_simple(sub, "progress", "renew the lease with a note", _progress))
    p.add_argument("--note", required=True)
    p.add_argument("--status")
    p = _lease_flags(_simple(sub, "ask", "ask a person (request_input)", ask))
    p.add_argument("question")
    p.add_argument("--option", action="append", help="a choice to offer (repeat)")
    p.add_argument("--wait", action="store_true", help="wait for the answer, with a spinner")
    p = _lease_flags(_simple(sub, "release", "give the task back", _release))
    p.add_argument("--reason", default="")
    _complete_parser(sub)
    _issue_parsers(sub)


def _simple(sub: Any, name: str, help: str, handler: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(name, help=help)
    p.set_defaults(handler=handler)
    return p


def _search(p: argparse.Namespace) -> int:
    if not (p.query or p.words):
        raise UsageError("search needs words to look for")
    return call(p, "search", {"query": p.query or p.words, "limit": p.limit})


def _progress(p: argparse.Namespace) -> int:
    return call(p, "report_progress", {**lease(p), "note": p.note, "status": p.status})


def _release(p: argparse.Namespace) -> int:
    return call(p, "release_task", {**lease(p), "reason": p.reason})


def _complete_parser(sub: Any) -> None:
    p = _lease_flags(_simple(sub, "complete", "finish with a report", complete))
    p.add_argument("--outcome", required=True, help="what is now true")
    p.add_argument("--artifact", action="append", help="kind=uri, e.g. pr=https://… (repeat)")
    p.add_argument("--artifacts-file", help="a JSON file with a list of artifacts")
    p.add_argument("--claim", action="append", help="a statement you verified (repeat)")
    p.add_argument("--not-done", action="append", help="something you did not do (repeat)")
    p.add_argument("--unknown", action="append", help="something you are unsure of (repeat)")
    p.add_argument("--next-step", help="the one follow-up you propose")
    p.add_argument(
        "--start-next",
        action="store_true",
        help="also start your next task, in the same call (saved as the run)",
    )


def _issue_parsers(sub: Any) -> None:
    issue = sub.add_parser("issue", help="file an issue about Weft, or read one").add_subparsers(
        dest="issue_command", required=True
    )
    p = _simple(issue, "submit", "file a bug, performance or enhancement issue", _issue_submit)
    p.add_argument("--title", required=True)
    p.add_argument("--body", required=True)
    p.add_argument("--kind", required=True, choices=["bug", "performance", "enhancement"])
    p = _simple(issue, "status", "an issue's status and messages", _issue_status)
    p.add_argument("id")


def _issue_submit(p: argparse.Namespace) -> int:
    return call(p, "submit_issue", {"title": p.title, "body": p.body, "kind": p.kind})


def _issue_status(p: argparse.Namespace) -> int:
    return call(p, "get_issue_status", {"id": p.id})
