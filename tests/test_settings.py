"""A bad environment value stops start-up with a message naming the variable."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
VARIABLES = (
    "WEFT_DEBUG",
    "DATABASE_URL",
    "SECRET_KEY",
    "REDIS_URL",
    "WEFT_BASE_URL",
    "ACCOUNT_EMAIL_VERIFICATION",
    "WEFT_TESTING",
    "WEFT_PUSH_TIMEOUT_SECONDS",
)


def _check(**env: str) -> subprocess.CompletedProcess[str]:
    return _run("check", **env)


def _run(*command: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in VARIABLES and not k.startswith("PYTEST")}
    return subprocess.run(
        [sys.executable, "manage.py", *command],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"WEFT_DEBUG": "maybe"}, "WEFT_DEBUG"),
        ({"WEFT_DEBUG": "true", "DATABASE_URL": "nonsense"}, "DATABASE_URL"),
        ({}, "SECRET_KEY"),
        ({"WEFT_DEBUG": "false"}, "SECRET_KEY"),
        ({"WEFT_DEBUG": "true", "REDIS_URL": "http://example.com"}, "REDIS_URL"),
        ({"WEFT_DEBUG": "true", "ACCOUNT_EMAIL_VERIFICATION": "sometimes"}, "ACCOUNT_EMAIL_VERIFICATION"),
        ({"WEFT_DEBUG": "true", "WEFT_PUSH_TIMEOUT_SECONDS": "soon"}, "WEFT_PUSH_TIMEOUT_SECONDS"),
    ],
)
def test_it_stops_on_a_bad_value(env: dict[str, str], named: str):
    result = _check(**env)
    assert result.returncode != 0
    assert named in result.stderr
    assert "Weft configuration error" in result.stderr


def test_it_starts_in_debug_mode_with_no_other_environment(tmp_path):
    result = _check(WEFT_DEBUG="true", WEFT_SQLITE_PATH=str(tmp_path / "db.sqlite3"))
    assert result.returncode == 0, result.stderr


def test_it_keeps_debug_off_unless_asked(tmp_path):
    result = _run(
        "shell", "-c", "from django.conf import settings; print(settings.DEBUG)",
        SECRET_KEY="a-production-key", WEFT_SQLITE_PATH=str(tmp_path / "db.sqlite3"),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "False"


def test_it_runs_the_embedded_default_in_debug_mode():
    # `make run` with its commands replaced by one that prints what they would see.
    clean = {k: v for k, v in os.environ.items() if k not in VARIABLES}
    result = subprocess.run(
        ["make", "-s", "run", "STAMP=", "PY=sh -c 'echo WEFT_DEBUG=$$WEFT_DEBUG' weft"],
        cwd=ROOT, env=clean, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["WEFT_DEBUG=true", "WEFT_DEBUG=true"]
