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
)


def _check(**env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in VARIABLES and not k.startswith("PYTEST")}
    return subprocess.run(
        [sys.executable, "manage.py", "check"],
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
        ({"DATABASE_URL": "nonsense"}, "DATABASE_URL"),
        ({"WEFT_DEBUG": "false"}, "SECRET_KEY"),
        ({"REDIS_URL": "http://example.com"}, "REDIS_URL"),
        ({"ACCOUNT_EMAIL_VERIFICATION": "sometimes"}, "ACCOUNT_EMAIL_VERIFICATION"),
    ],
)
def test_it_stops_on_a_bad_value(env: dict[str, str], named: str):
    result = _check(**env)
    assert result.returncode != 0
    assert named in result.stderr
    assert "Weft configuration error" in result.stderr


def test_it_starts_with_no_environment(tmp_path):
    result = _check(WEFT_SQLITE_PATH=str(tmp_path / "db.sqlite3"))
    assert result.returncode == 0, result.stderr
