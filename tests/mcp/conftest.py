"""MCP test fixtures, and `--audit-report`: per-tool coverage of the hint audit."""

from __future__ import annotations

import importlib
from collections import defaultdict

import pytest
from django.apps import apps

# tool name → set of paths ("success", "error") whose responses passed weft.hints.problems.
AUDIT: dict[str, set[str]] = defaultdict(set)
AUDIT_TOOLS: set[str] = set()
# tool name → set of paths whose hinted calls were run and did not fail as a broken hint.
EXECUTED: dict[str, set[str]] = defaultdict(set)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--audit-report", action="store_true", default=False, help="print the hint audit's per-tool coverage"
    )


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:  # type: ignore[no-untyped-def]
    if not config.getoption("--audit-report"):
        return
    write = terminalreporter.write_line
    write("")
    write("Hint audit coverage (responses checked against the five rules)")
    tools = sorted(AUDIT_TOOLS or AUDIT)
    full = 0
    for tool in tools:
        paths = AUDIT.get(tool, set())
        ok = {"success", "error"} <= paths
        full += ok
        success = "yes" if "success" in paths else "NO"
        error = "yes" if "error" in paths else "NO"
        ran = ",".join(sorted(EXECUTED.get(tool, set()))) or "NO"
        write(f"  {tool:<18} success={success:<3}  error={error:<3}  hints run={ran}")
    percent = 100 * full // len(tools) if tools else 0
    write(f"  coverage: {full}/{len(tools)} tools on both paths = {percent}%")
    executed = sum(1 for tool in tools if EXECUTED.get(tool))
    write(f"  executed hints: {executed}/{len(tools)} tools with executed hints")


@pytest.fixture(autouse=True)
def _plans(request: pytest.FixtureRequest) -> None:
    """Transactional tests flush the data migration's plans; put them back."""
    if "django_db_setup" not in request.fixturenames and not request.node.get_closest_marker("django_db"):
        return
    request.getfixturevalue("_django_db_helper")
    migration = importlib.import_module("accounts.migrations.0002_plans")
    migration.create_plans(apps, None)


@pytest.fixture(autouse=True)
def _forget_verified_tokens() -> None:
    """Each test starts with an empty verified-token cache (flushes send no signals)."""
    from weft.mcp.verifier import verified_tokens

    verified_tokens.clear()
