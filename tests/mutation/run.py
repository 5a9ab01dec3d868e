"""Mutation testing of the rule modules with mutmut, one module at a time.

Each module is mutated in its own copy of the project under `.mutation/<module>/` (never in the
checkout), and each mutant runs only the fast tests mapped to that module below — mutmut narrows
that further to the tests that execute the mutated function. Prints `module  killed/total  score%`
and every surviving mutant, writes the raw results to `.mutation/`, and exits 1 when a module
scores below its number in thresholds.toml.

    python -m tests.mutation.run              # every rule module
    python -m tests.mutation.run --quick      # the CI subset
    python -m tests.mutation.run boards/lease.py --workers 1
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / ".mutation"
THRESHOLDS = Path(__file__).with_name("thresholds.toml")
MUTMUT = Path(sys.executable).with_name("mutmut")
# Every package of the project (each app the settings install), and what Django and the tests read.
COPIED = (
    *sorted(p.name for p in ROOT.iterdir() if (p / "__init__.py").exists() and p.name != "tests"),
    "templates",
    "static",
    "tests",
    "manage.py",
)

# The board services' own tests on SQLite (the race tests skip themselves there).
BOARD_SERVICE_TESTS = [
    "tests/boards/test_claim.py",
    "tests/boards/test_fencing_and_timing.py",
    "tests/boards/test_lease_edges.py",
    "tests/boards/test_attention_limits.py",
    "tests/boards/test_complete_and_inbox.py",
    "tests/boards/test_events_and_queries.py",
    "tests/boards/test_hint_contract.py",
    "tests/boards/test_review_moved.py",
    "tests/boards/test_trash.py",
    "tests/boards/test_services_mutants.py",
    "tests/boards/test_runs_mutants.py",
    "tests/boards/test_start_next.py",
]
# module → the tests that cover it (SQLite only; missing files are skipped).
MODULES: dict[str, list[str]] = {
    "boards/lease.py": ["tests/boards/test_lease_rules.py", "tests/boards/test_lease_mutants.py"],
    "boards/attention.py": [
        "tests/boards/test_attention_rules.py",
        "tests/boards/test_attention_mutants.py",
    ],
    "weft/hints.py": ["tests/weft/test_hints.py", "tests/weft/test_hint_mutants.py"],
    "boards/access.py": ["tests/boards/test_access.py", "tests/boards/test_access_mutants.py"],
    "accounts/access.py": [
        "tests/boards/test_access.py",
        "tests/accounts/test_access_mutants.py",
        "tests/api/test_people.py",
        "tests/accounts/test_plan_changes.py",
        "tests/accounts/test_personal_tokens.py",
    ],
    "boards/services/common.py": BOARD_SERVICE_TESTS,
    "boards/services/runs.py": BOARD_SERVICE_TESTS,
    "boards/services/next_task.py": BOARD_SERVICE_TESTS,
    "boards/services/claim.py": [*BOARD_SERVICE_TESTS, "tests/boards/test_claim_interleavings.py"],
    "boards/services/delivery.py": [
        *BOARD_SERVICE_TESTS,
        "tests/boards/test_claim_interleavings.py",
        "tests/boards/test_delivery_locks.py",
    ],
    "boards/services/work.py": [
        *BOARD_SERVICE_TESTS,
        "tests/boards/test_held_agreement.py",
        "tests/boards/test_attention_rules.py",
        "tests/boards/test_inbox_mutants.py",
        "tests/boards/test_my_work.py",
    ],
    "boards/evidence.py": ["tests/boards/test_evidence.py", "tests/boards/test_runs_mutants.py"],
    "boards/services/inbox.py": [
        *BOARD_SERVICE_TESTS,
        "tests/web/test_question_actions.py",
        "tests/web/test_views.py",
        "tests/boards/test_inbox_mutants.py",
    ],
    "issues/redact.py": ["tests/issues/test_redact.py", "tests/issues/test_redact_rules.py"],
    "issues/redact_patterns.py": ["tests/issues/test_redact.py", "tests/issues/test_redact_rules.py"],
    "issues/environment.py": ["tests/issues/test_environment.py"],
    "issues/access.py": [
        "tests/issues/test_access.py",
        "tests/issues/test_guest_tokens.py",
        "tests/issues/test_isolation.py",
    ],
    "weft/mcp/verifier.py": [
        "tests/mcp/test_token_cache.py",
        "tests/mcp/test_auth.py",
        "tests/mcp/test_verifier_mutants.py",
        "tests/api/test_auth.py",
        "tests/mcp/test_token_cache_rest.py",
    ],
}
# The MCP tests fail when a second pytest session runs in the process that ran the first (mutmut's
# default forks every mutant from that process): fork them from a clean fork server instead.
ISOLATION = {"weft/mcp/verifier.py": {"process_isolation": "forkserver"}}
QUICK = ("boards/lease.py", "boards/attention.py")
KILLED = {"killed", "timeout", "caught by type check"}


@dataclass
class Survivor:
    name: str
    status: str
    line: int
    before: str
    after: str


@dataclass
class Score:
    module: str
    killed: int = 0
    total: int = 0
    seconds: float = 0.0
    survivors: list[Survivor] = field(default_factory=list)

    @property
    def percent(self) -> float:
        return 100.0 * self.killed / self.total if self.total else 0.0


def workdir(module: str) -> Path:
    return OUT / module.removesuffix(".py").replace("/", ".")


def prepare(module: str) -> Path:
    """A fresh copy of the project whose pyproject tells mutmut to mutate `module` only."""
    work = workdir(module)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, work / name, ignore=ignore)
        else:
            shutil.copy2(source, work / name)
    package = module.split("/", 1)[0]
    tests = [path for path in MODULES[module] if (ROOT / path).exists()]
    pyproject = (ROOT / "pyproject.toml").read_text()
    shared: dict[str, object] = tomllib.loads(pyproject).get("tool", {}).get("mutmut", {})
    settings = {
        **shared,
        "source_paths": [package],
        "only_mutate": [module],
        "also_copy": [name for name in COPIED if name not in (package, "tests")],
        "pytest_add_cli_args": ["-p", "tests.mutation.plugin", "--reuse-db"],
        "pytest_add_cli_args_test_selection": tests,
        **ISOLATION.get(module, {}),
    }
    pyproject = re.sub(r"(?ms)^\[tool\.mutmut\].*?(?=^\[|\Z)", "", pyproject)
    section = "\n".join(f"{key} = {json.dumps(value)}" for key, value in settings.items())
    (work / "pyproject.toml").write_text(f"{pyproject.rstrip()}\n\n[tool.mutmut]\n{section}\n")
    return work


def function_lines(source: str) -> dict[str, int]:
    """mutmut's name for each function or method (x_f, xǁClassǁm) → its first line."""
    lines: dict[str, int] = {}
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            lines[f"x_{node.name}"] = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    first = min([item.lineno, *(d.lineno for d in item.decorator_list)])
                    lines[f"xǁ{node.name}ǁ{item.name}"] = first
    return lines


# Run inside a mutation copy: the diff of every named mutant, as `mutmut show` prints it.
_SHOW = """
import json, sys
from mutmut.__main__ import find_mutant
from mutmut.mutation.diff_apply import get_diff_for_mutant
names = json.load(sys.stdin)
json.dump({n: get_diff_for_mutant(n, path=find_mutant(n).path) for n in names}, sys.stdout)
"""


def diffs(work: Path, names: list[str]) -> dict[str, str]:
    """The diffs of `names`, from one process rather than one `mutmut show` each."""
    if not names:
        return {}
    shown = subprocess.run(
        [sys.executable, "-c", _SHOW], cwd=work, input=json.dumps(names), capture_output=True, text=True
    )
    return json.loads(shown.stdout) if shown.returncode == 0 else {}


def describe(name: str, status: str, diff: str, starts: dict[str, int]) -> Survivor:
    """Where a mutant is in the original file and what it changes, from its diff."""
    function = name.rsplit(".", 1)[-1].split("__mutmut_")[0]
    line, offset, before, after = starts.get(function, 0), 0, "", ""
    for text in diff.splitlines():
        hunk = re.match(r"@@ -(\d+)", text)
        if hunk:
            offset = int(hunk[1]) - 1
        elif text.startswith("-") and not text.startswith("---") and not before:
            before, line = text[1:].strip(), starts.get(function, 1) + offset
        elif text.startswith("+") and not text.startswith("+++") and not after:
            after = text[1:].strip()
        elif text.startswith(" ") and not before:
            offset += 1
    return Survivor(name, status, line, before, after)


def mutate(module: str, workers: int) -> Score:
    work = prepare(module)
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "WEFT_TEST_REDIS_URL")}
    env["WEFT_MUTATION_DB"] = str(work / "test-db.sqlite3")
    started = time.monotonic()
    log = work / "mutmut-run.log"
    with log.open("w") as out:
        run = subprocess.run(
            [str(MUTMUT), "run", "--max-children", str(workers)],
            cwd=work,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            check=False,
        )
    score = Score(module, seconds=time.monotonic() - started)
    meta = work / "mutants" / f"{module}.meta"
    if run.returncode != 0 or not meta.exists():
        print(f"{module}: mutmut failed (exit {run.returncode}); see {log}", file=sys.stderr)
        return score
    from mutmut.stats import status_by_exit_code

    codes: dict[str, int | None] = json.loads(meta.read_text())["exit_code_by_key"]
    starts = function_lines((ROOT / module).read_text())
    statuses = {name: status_by_exit_code[code] for name, code in codes.items()}
    alive = sorted((name for name, status in statuses.items() if status not in KILLED), key=_natural)
    shown = diffs(work, alive)
    score.total, score.killed = len(statuses), len(statuses) - len(alive)
    score.survivors = [describe(name, statuses[name], shown.get(name, ""), starts) for name in alive]
    return score


def _natural(name: str) -> tuple[str, int]:
    head, _, number = name.rpartition("_")
    return head, int(number) if number.isdigit() else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("modules", nargs="*", help="rule modules to mutate (default: all)")
    parser.add_argument("--quick", action="store_true", help=f"only the CI subset: {', '.join(QUICK)}")
    parser.add_argument("--workers", type=int, default=2, help="mutants run in parallel (default 2)")
    args = parser.parse_args(argv)
    modules = list(QUICK) if args.quick else args.modules or list(MODULES)
    unknown = [m for m in modules if m not in MODULES]
    if unknown:
        parser.error(f"not a rule module: {', '.join(unknown)}")
    thresholds: dict[str, float] = tomllib.loads(THRESHOLDS.read_text())

    scores = []
    for module in modules:
        print(f"mutating {module} …", flush=True)
        scores.append(mutate(module, args.workers))

    failed = False
    print(f"\n{'module':<28} {'killed/total':>12} {'score':>7} {'floor':>6} {'time':>6}")
    for s in scores:
        floor = thresholds.get(s.module, 100.0)
        low = s.total == 0 or s.percent < floor
        failed |= low
        mark = "  BELOW THRESHOLD" if low else ""
        print(
            f"{s.module:<28} {f'{s.killed}/{s.total}':>12} {s.percent:6.1f}% {floor:5.0f}%"
            f" {s.seconds:5.0f}s{mark}"
        )
    for s in scores:
        if s.survivors:
            print(f"\nsurvivors in {s.module}:")
        for v in s.survivors:
            print(f"  {s.module}:{v.line}  [{v.status}]  {v.before}  →  {v.after}  ({v.name})")
    report = {
        s.module: {
            "killed": s.killed,
            "total": s.total,
            "score": round(s.percent, 1),
            "seconds": round(s.seconds),
            "survivors": [v.__dict__ for v in s.survivors],
        }
        for s in scores
    }
    OUT.mkdir(exist_ok=True)
    (OUT / ("report-quick.json" if args.quick else "report.json")).write_text(json.dumps(report, indent=2))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
