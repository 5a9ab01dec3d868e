"""One agent of a fault run, as its own OS process: claim, heartbeat, complete over REST, on a loop.

`python -m bench.faults.agent BASE TOKEN NAME HISTORY.jsonl --tasks 5-80 --share 81-160 --seconds 30
--lease 2` works its tasks in order (now and then one of `--share`, another agent's, to race it)
until the time or the tasks run out, and writes every call with its send and answer times to
HISTORY (one JSON object a line, flushed at once, so a kill -9 loses at most the call in flight).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import time
from typing import IO, Any

import httpx

MAX_CALLS = 50_000
# Answers worth retrying the same call for: the server or its database was away for a moment.
# "conflict": the first request with the same Idempotency-Key is still running.
RETRIABLE = frozenset(
    {"transport", "unavailable", "internal_error", "conflict", "http_502", "http_503", "http_500"}
)
RETRIES = 20


class Agent:
    def __init__(self, client: httpx.AsyncClient, name: str, out: IO[str], lease: float) -> None:
        self.client, self.name, self.out, self.lease = client, name, out, lease
        self.calls = 0

    async def call(
        self, op: str, path: str, body: dict[str, Any], key: str = "", **record: Any
    ) -> dict[str, Any]:
        """One request and its answer, recorded; the answer's JSON (`{}` when there was none)."""
        self.calls += 1
        sent = time.time()
        headers = {"Idempotency-Key": key} if key else {}
        if key:
            record["key"] = key
        try:
            response = await self.client.post(path, json=body, headers=headers)
            answer: dict[str, Any] = (
                response.json() if "json" in response.headers.get("content-type", "") else {}
            )
            outcome = (
                "ok"
                if response.status_code < 300
                else answer.get("error", {}).get("code") or f"http_{response.status_code}"
            )
        except httpx.HTTPError as exc:
            answer, outcome = {}, "transport"
            record["error"] = type(exc).__name__
        entry = {
            "agent": self.name,
            "op": op,
            "sent": sent,
            "recv": time.time(),
            "outcome": outcome,
            **record,
        }
        if op == "start" and outcome == "ok":
            entry.update(run=answer["runId"], token=answer["leaseToken"], epoch=answer["epoch"])
        self.out.write(json.dumps(entry) + "\n")
        self.out.flush()
        return {**answer, "_outcome": outcome}

    async def retried(self, op: str, path: str, body: dict[str, Any], **record: Any) -> dict[str, Any]:
        """The call again while the answer is retriable (bounded), as a careful client does: with
        one Idempotency-Key, so a write that was applied but not answered is answered on retry."""
        answer: dict[str, Any] = {}
        key = f"{self.name}-{op}-{self.calls}-{random.getrandbits(32):08x}"
        for attempt in range(RETRIES):
            answer = await self.call(op, path, body, key=key, attempt=attempt, **record)
            if answer["_outcome"] not in RETRIABLE:
                break
            await asyncio.sleep(0.25)
        return answer

    async def work(self, task: int) -> bool:
        """Claim the task and finish it; False when the claim was refused."""
        claim = await self.retried("start", f"/api/v1/tasks/{task}/start", {}, task=task)
        if claim["_outcome"] != "ok":
            return False
        run, token = claim["runId"], claim["leaseToken"]
        for _ in range(random.randint(0, 2)):
            await asyncio.sleep(random.uniform(0, self.lease / 10))
            note = f"{self.name}-{self.calls}"
            body = {"leaseToken": token, "note": note}
            answer = await self.retried(
                "heartbeat", f"/api/v1/runs/{run}/heartbeat", body, task=task, run=run, note=note
            )
            if answer["_outcome"] != "ok":
                break  # a holder that lost its lease still tries to finish: it must be refused too
        body = {"leaseToken": token, "outcome": f"done by {self.name}", "claims": ["the fault run's work"]}
        await self.retried("complete", f"/api/v1/runs/{run}/complete", body, task=task, run=run)
        return True


def _ids(span: str) -> list[int]:
    low, high = (int(part) for part in span.split("-"))
    return list(range(low, high + 1))


async def main(args: argparse.Namespace) -> None:
    deadline = time.monotonic() + args.seconds
    own, share = _ids(args.tasks), _ids(args.share) if args.share else []
    headers = {"authorization": f"Bearer {args.token}"}
    limits = httpx.Limits(max_connections=2)
    async with httpx.AsyncClient(base_url=args.base, headers=headers, timeout=15, limits=limits) as client:
        with open(args.history, "a") as out:
            agent = Agent(client, args.name, out, args.lease)
            done = 0
            while own and time.monotonic() < deadline and agent.calls < MAX_CALLS:
                if share and random.random() < args.race:
                    # About where the other agent is on its own list: a real race for one task.
                    task = share[min(len(share) - 1, done + random.randint(0, 2))]
                else:
                    task, done = own.pop(0), done + 1
                await agent.work(task)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base")
    parser.add_argument("token")
    parser.add_argument("name")
    parser.add_argument("history")
    parser.add_argument("--tasks", required=True)
    parser.add_argument("--share", default="")
    parser.add_argument("--race", type=float, default=0.2)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--lease", type=float, default=2)
    asyncio.run(main(parser.parse_args()))
