"""What redaction costs: issues.redact.redact over a 1 MB issue body, against one bare re.sub.

Run with `.venv/bin/python bench/redact.py [--runs N]`. Builds a deterministic 1 MB body of what
agents paste into issues (log lines with timestamps, run ids and SHAs, Python stack traces, HTTP
exchanges with headers, JSON config dumps, shell history), with a secret or a personal detail in
about one line in twenty. Then it times, interleaved (A B A B …, so both sides see the same machine
load), the full redaction and a baseline: a single `re.sub` of the email pattern over the same
body. Prints median and p95 of each in ms and the ratio of the medians. The budget is 50 ms.
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from issues.redact import redact  # noqa: E402

SIZE = 1_000_000
BUDGET_MS = 50.0
WARMUP = 3
EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")

SECRETS = (
    "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJydW4tMTcifQ.c2lnbmF0dXJlLXNpZ25hdHVyZQ",
    "export OPENAI_API_KEY=sk-proj-Xy7Qm2Lp9Rt4Vw8Zb3Nc6Hd1Jf5Kg0Ae",
    "git remote set-url origin https://deploy:Tr0ub4dor3@git.example.org/weft/weft.git",
    'settings = {"db_password": "correct horse battery staple", "debug": false}',
    "ERROR mail bounced for maria.gonzalez@example.net (reply-to: +34 612 345 678)",
    'File "/home/priya/src/weft/issues/services.py", line 88, in issue_submit',
    "payment failed for card 4242 4242 4242 4242, IBAN GB82 WEST 1234 5698 7654 32",
    "peer 203.0.113.42:51522 reset the connection; upstream 2001:db8:85a3::8a2e:370:7334",
    "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
    "slack webhook token xoxb-2048-4096-AbCdEfGhIjKlMnOpQrStUvWx",
)
ORDINARY = (
    "{ts} INFO  boards.services.claim run {run} claimed task {task} (epoch {epoch}) lease 300s",
    "{ts} DEBUG weft.events relay positioned {n} events up to {pos} in {ms} ms",
    "{ts} WARN  hooks.delivery attempt {n} for delivery {uuid} got 503, retry in {ms}s",
    'Traceback (most recent call last):\n  File "/srv/weft/boards/services/runs.py", line {n}, in run_beat',
    "    raise WeftError('lease_lost', 'the lease expired', {{'run': {run}}})",
    "{ts} INFO  build {sha} version 2.{n}.0-rc.1 deployed by ci in {ms} ms",
    'GET /api/v1/tasks/{task}?board={n} HTTP/1.1" 200 {pos} "-" "weft-agent/1.{n}.3"',
    '{{"task": {task}, "run": {run}, "state": "active", "updated_at": "{ts}", "order": "ORD-{pos}"}}',
    "$ git log --oneline -3\n{sha} Fix the sweep for run {run}\n{sha} Bump version to 1.{n}.2",
    "{ts} INFO  usage input_tokens={pos} output_tokens={ms} max_tokens=4096 epoch_ms=17332{pos}",
)


def body(size: int = SIZE, seed: int = 7) -> str:
    rng = random.Random(seed)
    lines: list[str] = []
    length = 0
    while length < size:
        if rng.random() < 0.05:
            line = rng.choice(SECRETS)
        else:
            line = rng.choice(ORDINARY).format(
                ts=f"2026-12-03T{rng.randrange(24):02}:{rng.randrange(60):02}:{rng.randrange(60):02}.{rng.randrange(1000):03}Z",
                run=rng.randrange(1, 99999),
                task=rng.randrange(1, 99999),
                epoch=rng.randrange(1, 50),
                n=rng.randrange(1, 400),
                pos=rng.randrange(10**5, 10**6),
                ms=rng.randrange(1, 900),
                uuid=f"{rng.getrandbits(128):032x}",
                sha=f"{rng.getrandbits(160):040x}"[: rng.choice((7, 12, 40))],
            )
        lines.append(line)
        length += len(line) + 1
    return "\n".join(lines)[:size]


def _time(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return (time.perf_counter() - start) * 1000


def _p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[max(0, int(len(ordered) * 0.95) - 1)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    runs = parser.parse_args().runs
    text = body()
    found = redact(text, salt="bench")
    baseline: list[float] = []
    full: list[float] = []
    for i in range(WARMUP + runs):
        a = _time(lambda: EMAIL.sub("<EMAIL>", text))
        b = _time(lambda: redact(text, salt="bench"))
        if i >= WARMUP:
            baseline.append(a)
            full.append(b)
    print(f"Weft redaction — {len(text):,} characters, {len(text.splitlines()):,} lines, kinds {found.kinds}")
    print(f"{runs} interleaved runs (A B A B), {WARMUP} warm-up pairs not timed")
    print(f"{'':<28}{'median ms':>10}{'p95 ms':>9}")
    for name, samples in (("baseline: one email re.sub", baseline), ("redact()", full)):
        print(f"{name:<28}{statistics.median(samples):>10.2f}{_p95(samples):>9.2f}")
    median = statistics.median(full)
    print(f"ratio of medians: {median / statistics.median(baseline):.2f}x; budget {BUDGET_MS:.0f} ms")
    return 0 if median < BUDGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
