"""WEFT_LEASE_SECONDS compresses every lease for a fault run; unset, a lease is the 20 minutes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRINT = "from boards import lease; print(lease.LEASE_DURATION.total_seconds())"


def _shell(**env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k != "WEFT_LEASE_SECONDS" and not k.startswith("PYTEST")}
    return subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", PRINT],
        cwd=ROOT,
        env={**clean, "WEFT_DEBUG": "true", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_it_keeps_the_twenty_minute_lease_by_default():
    assert _shell().stdout.split()[-1:] == ["1200.0"]


def test_it_compresses_every_lease_for_a_fault_run():
    assert _shell(WEFT_LEASE_SECONDS="3").stdout.split()[-1:] == ["3.0"]


def test_it_stops_on_a_negative_lease():
    result = _shell(WEFT_LEASE_SECONDS="-1")
    assert result.returncode != 0
    assert "WEFT_LEASE_SECONDS" in result.stderr
