"""Weft under uvicorn with a lease of WEFT_TEST_LEASE_SECONDS, for the CLI's lease tests.

`python -m tests.cli.lease_server PORT`: the lease rules read LEASE_DURATION at each claim and
heartbeat, so setting it before the server starts shortens every lease this server grants.
"""

from __future__ import annotations

import os
import sys
from datetime import timedelta

import uvicorn

from boards import lease

if __name__ == "__main__":
    seconds = os.environ.get("WEFT_TEST_LEASE_SECONDS")
    if seconds:
        lease.LEASE_DURATION = timedelta(seconds=float(seconds))
    uvicorn.run(
        "weft.asgi:application", host="127.0.0.1", port=int(sys.argv[1]), lifespan="on", log_level="warning"
    )
