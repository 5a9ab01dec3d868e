"""The structure rules `make check` holds the code to (docs/architecture.md).

- orm: no `.objects` in a surface module (views.py, mcp_tools.py, consumers.py,
  context_processors.py); a surface reads through selectors and writes through services.
- template: an `{% if %}` / `{% elif %}` in a template decides how to show, never a rule. Two
  shapes a checker can see are refused: an ordering comparison (`<`, `>`, `<=`, `>=`) against a
  number other than 0 or 1 (a threshold, such as "lease low under 300 seconds"), and a condition
  with two or more comparisons against string literals (a set of states or a who-may-do-what
  rule, such as `state == "active" or state == "waiting_input"`). Emptiness, plurals and a
  single equality with a literal (which partial to show) stay allowed. The rule belongs in a
  pure module, selector or model property the template then asks by name.
- size: no production module over 450 lines, no function over 50 lines.
- copies: pylint's duplicate-code (R0801), six similar lines, imports and docstrings ignored.

Production code is every package in PACKAGES, without migrations; tests are not production.
Run `python tools/check_structure.py [--root DIR] [--skip-copies]`; the exit status is 1 when
anything is found.
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PACKAGES = ("accounts", "api", "boards", "cli", "hooks", "issues", "weft")
COPY_PACKAGES = ("accounts", "api", "boards", "cli", "hooks", "weft")
SURFACES = ("views.py", "mcp_tools.py", "consumers.py", "context_processors.py")
MAX_MODULE_LINES = 450
MAX_FUNCTION_LINES = 50
MIN_SIMILARITY_LINES = 6
# Plurals and emptiness: `n > 1`, `n <= 1`, `n > 0` read as presentation, not as a rule.
ALLOWED_THRESHOLDS = (0, 1)
ORDERING = ("<", ">", "<=", ">=")
COMPARISONS = ("==", "!=", *ORDERING)
IF_TAG = re.compile(r"{%-?\s*(?:el)?if\s+(.*?)\s*-?%}", re.DOTALL)


@dataclass(frozen=True)
class Finding:
    check: str
    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: [{self.check}] {self.message}"


def _python_files(root: Path, packages: tuple[str, ...] = PACKAGES) -> Iterator[Path]:
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            if "migrations" not in path.relative_to(root).parts:
                yield path


def _templates(root: Path) -> Iterator[Path]:
    yield from sorted((root / "templates").rglob("*.html"))
    for package in PACKAGES:
        yield from sorted((root / package).glob("**/templates/**/*.html"))


def _relative(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


def check_orm(root: Path) -> list[Finding]:
    """`.objects` in a surface module: the query belongs in a selector or a service."""
    findings = []
    for path in _python_files(root):
        if path.name not in SURFACES:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Attribute) and node.attr == "objects":
                findings.append(
                    Finding(
                        "orm",
                        _relative(root, path),
                        node.lineno,
                        f"`{ast.unparse(node)}` in a surface; read in a selector, write in a service",
                    )
                )
    return sorted(findings, key=lambda finding: (finding.path, finding.line))


def _number(token: str) -> float | None:
    try:
        return float(token)
    except ValueError:
        return None


def _is_string(token: str) -> bool:
    return len(token) >= 2 and token[0] == token[-1] and token[0] in "'\""


def condition_problem(condition: str) -> str | None:
    """Why one `{% if %}` condition holds a rule, or None when it only decides how to show."""
    tokens = condition.split()
    string_comparisons = 0
    for index, token in enumerate(tokens):
        if token not in COMPARISONS or index == 0 or index == len(tokens) - 1:
            continue
        operands = (tokens[index - 1], tokens[index + 1])
        if token in ORDERING:
            for operand in operands:
                value = _number(operand)
                if value is not None and value not in ALLOWED_THRESHOLDS:
                    return f"threshold `{token} {operand}`; name it in a rule module and pass the outcome"
        if any(_is_string(operand) for operand in operands):
            string_comparisons += 1
    if string_comparisons >= 2:
        return "compares against several literals (a set of states or a permission rule); decide it in Python"
    return None


def check_templates(root: Path) -> list[Finding]:
    """Template conditions that hold a business rule (see the module docstring)."""
    findings = []
    for path in _templates(root):
        source = path.read_text()
        for match in IF_TAG.finditer(source):
            problem = condition_problem(match.group(1))
            if problem is not None:
                line = source.count("\n", 0, match.start()) + 1
                findings.append(
                    Finding("template", _relative(root, path), line, f"{match.group(0)}: {problem}")
                )
    return findings


def check_sizes(root: Path) -> list[Finding]:
    """Modules over MAX_MODULE_LINES lines and functions over MAX_FUNCTION_LINES lines."""
    findings = []
    for path in _python_files(root):
        source = path.read_text()
        name = _relative(root, path)
        lines = len(source.splitlines())
        if lines > MAX_MODULE_LINES:
            findings.append(Finding("size", name, 1, f"module of {lines} lines (at most {MAX_MODULE_LINES})"))
        for node in ast.walk(ast.parse(source, str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    findings.append(
                        Finding(
                            "size",
                            name,
                            node.lineno,
                            f"function {node.name} of {length} lines (at most {MAX_FUNCTION_LINES})",
                        )
                    )
    return findings


PYLINT_LOCATION = re.compile(r"^==(?P<module>[\w.]+):\[(?P<start>\d+):(?P<end>\d+)\]$")


def check_copies(root: Path) -> list[Finding]:
    """Near-copies of six or more lines across production modules (pylint's duplicate-code)."""
    files = [str(path) for path in _python_files(root, COPY_PACKAGES)]
    if not files:
        return []
    command = [
        sys.executable,
        "-m",
        "pylint",
        "--rcfile=/dev/null",
        "--disable=all",
        "--enable=duplicate-code",
        f"--min-similarity-lines={MIN_SIMILARITY_LINES}",
        "--ignore-imports=yes",
        "--ignore-docstrings=yes",
        "--ignore-comments=yes",
        "--ignore-signatures=yes",
        "--score=no",
        "--persistent=no",
        *files,
    ]
    output = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False).stdout
    return _copies_from(output)


def _copies_from(output: str) -> list[Finding]:
    findings = []
    for block in output.split("R0801")[1:]:
        places = []
        for raw in block.splitlines():
            match = PYLINT_LOCATION.match(raw.strip())
            if match:
                places.append(f"{match['module']}:{match['start']}-{match['end']}")
        if places:
            first, *others = places
            module, _, lines = first.partition(":")
            findings.append(
                Finding(
                    "copies",
                    module.replace(".", "/") + ".py",
                    int(lines.split("-")[0]),
                    f"similar lines {first} also in {', '.join(others)}",
                )
            )
    return findings


def run(root: Path, *, copies: bool = True) -> list[Finding]:
    findings = [*check_orm(root), *check_templates(root), *check_sizes(root)]
    if copies:
        findings.extend(check_copies(root))
    return findings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--skip-copies", action="store_true", help="leave out the (slower) pylint run")
    args = parser.parse_args(argv)
    findings = run(args.root.resolve(), copies=not args.skip_copies)
    for finding in findings:
        print(finding)
    print(f"{len(findings)} structure finding(s)" if findings else "structure: clean")
    return 1 if findings else 0


if __name__ == "__main__":
    raise SystemExit(main())
