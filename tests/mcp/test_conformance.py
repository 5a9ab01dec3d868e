"""The MCP conformance suite's server scenarios that apply to Weft, against Weft under uvicorn.

The suite cannot sign in, so the server runs with the test-only WEFT_MCP_TEST_TOKEN, which
gives credential-less requests a fixed token (tools/list, ping and initialize touch no data).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.mcp.server_process import uvicorn_server

SCENARIOS = ["server-initialize", "ping", "tools-list", "dns-rebinding-protection"]
PACKAGE = "@modelcontextprotocol/conformance@0.1.13"


@pytest.fixture(scope="module")
def weft_url():
    if shutil.which("npx") is None:
        pytest.skip("npx is not installed (CI has Node)")
    with tempfile.TemporaryDirectory() as root:
        env = {
            "WEFT_MCP_TEST_TOKEN": "conformance-" + os.urandom(8).hex(),
            "WEFT_SQLITE_PATH": str(Path(root) / "db.sqlite3"),
            "DATABASE_URL": "",
        }
        with uvicorn_server(env, migrate=True) as base:
            yield f"{base}/api/mcp"


@pytest.mark.e2e
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_it_passes_the_conformance_scenario(weft_url, scenario, tmp_path):
    result = subprocess.run(
        ["npx", "--yes", PACKAGE, "server", "--url", weft_url, "--scenario", scenario, "-o", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = result.stdout + result.stderr
    sys.stdout.write(output)
    assert result.returncode == 0, output
