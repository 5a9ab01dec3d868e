"""`weft start ID [-- COMMAND …]`: claim the task; with a command, run it under the lease.

The command's output streams through; a heartbeat thread renews the lease every
WEFT_CLI_HEARTBEAT_SECONDS (300). Exit 0 completes the task with a summary of the output and the
exit code as a claim; anything else releases it. SIGINT and SIGTERM go to the command first,
then the task is released. A lost lease stops the command and exits 5.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import os
import signal
import subprocess
import sys
import threading
from typing import Any

from cli import config
from cli.client import LEASE_LOST, OK, Answer, Client, emit
from cli.commands import client

TAIL_LINES = 20
SUMMARY_CHARS = 9_000


def start(parsed: argparse.Namespace) -> int:
    with client(parsed.url) as api:
        answer = api.call("start_task", {"id": parsed.id})
        if answer.error or not answer.payload.get("leaseToken"):
            return emit(answer, as_json=parsed.json)
        lease = {"runId": answer.payload["runId"], "leaseToken": answer.payload["leaseToken"]}
        config.update(run={**lease, "taskId": parsed.id})
        if not parsed.command:
            return emit(answer, as_json=parsed.json)
        if not parsed.json:
            print(f"Started task {parsed.id} (run {lease['runId']}); running: {' '.join(parsed.command)}")
        return Supervised(api, lease, parsed).run()


class Supervised:
    """The command under a lease: output, heartbeats, signals, and the ending."""

    def __init__(self, api: Client, lease: dict[str, Any], parsed: argparse.Namespace) -> None:
        self.api, self.lease, self.parsed = api, lease, parsed
        self.tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
        self.stopped = threading.Event()
        self.lost: Answer | None = None
        self.signalled: int | None = None
        self.child: subprocess.Popen[str] | None = None
        self.every = float(os.environ.get("WEFT_CLI_HEARTBEAT_SECONDS", "300"))

    def run(self) -> int:
        # The handlers are in place before the command starts, so no signal finds the CLI bare.
        previous = {sig: signal.signal(sig, self._forward) for sig in (signal.SIGINT, signal.SIGTERM)}
        self.child = subprocess.Popen(
            self.parsed.command,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
            # Its own process group, so a signal reaches the whole command (a shell and its children).
            start_new_session=True,
        )
        if self.signalled is not None:
            self._signal_child(self.signalled)
        beat = threading.Thread(target=self._heartbeats, daemon=True)
        beat.start()
        try:
            self._stream()
            code = self.child.wait()
        finally:
            self.stopped.set()
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        beat.join(timeout=30)
        return self._finish(code)

    def _stream(self) -> None:
        assert self.child is not None and self.child.stdout is not None
        for line in self.child.stdout:
            self.tail.append(line.rstrip("\n"))
            # The command's output goes to stderr under --json, so stdout stays one JSON payload.
            print(line, end="", file=sys.stderr if self.parsed.json else sys.stdout, flush=True)

    def _forward(self, signum: int, frame: Any) -> None:
        self.signalled = signum
        self._signal_child(signum)

    def _signal_child(self, signum: int) -> None:
        if self.child is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.child.pid, signum)

    def _heartbeats(self) -> None:
        # Its own HTTP client: httpx clients are not shared across threads here.
        beat = Client(str(self.api.http.base_url), config.load().get("token"))
        try:
            while not self.stopped.wait(self.every):
                answer = beat.call("report_progress", {**self.lease, "note": self._note()})
                if answer.code == "lease_lost":
                    self.lost = answer
                    self._signal_child(signal.SIGTERM)
                    return
        finally:
            beat.close()

    def _note(self) -> str:
        last = self.tail[-1] if self.tail else "(no output yet)"
        return f"running {self.parsed.command[0]}; last output: {last}"[:2000]

    def _finish(self, code: int) -> int:
        if self.lost is not None:
            emit(self.lost, as_json=self.parsed.json)
            return LEASE_LOST
        command = " ".join(self.parsed.command)
        if code == 0 and self.signalled is None:
            answer = self.api.call("complete_task", self._report(command))
        else:
            why = f"signal {self.signalled}" if self.signalled else f"exit code {code}"
            reason = f"`{command}` stopped with {why}"
            answer = self.api.call("release_task", {**self.lease, "reason": reason[:200]})
        config.update(run=None)
        shown = emit(answer, as_json=self.parsed.json)
        if code == 0 and self.signalled is None:
            return shown if shown != OK else OK
        return 128 + self.signalled if self.signalled else 1

    def _report(self, command: str) -> dict[str, Any]:
        output = "\n".join(self.tail) or "(no output)"
        outcome = f"`{command}` exited with code 0. Last output:\n{output}"
        return {
            **self.lease,
            "outcome": outcome[:SUMMARY_CHARS],
            "claims": [f"`{command}` exited with code 0"[:1000]],
        }


def add_parser(sub: Any) -> None:
    p = sub.add_parser("start", help="claim a task; with `-- COMMAND`, run it under the lease")
    p.add_argument("id")
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command to run")
    p.set_defaults(handler=_start)


def _start(parsed: argparse.Namespace) -> int:
    if parsed.command[:1] == ["--"]:
        parsed.command = parsed.command[1:]
    return start(parsed)
