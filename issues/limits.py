"""PURE: the size of every text and list an issue tool takes (docs/limits.md, "Issues").

The checks are boards.limits' own (`text`, `LimitError`): one rule for every text field, NUL
refused, nothing cut silently. The MCP tools put these numbers in their input schemas.
"""

from __future__ import annotations

from datetime import timedelta

from boards.limits import ID_MAX as ID_MAX

TITLE = 200
BODY = 20_000
MESSAGE = 10_000
RESOLUTION = 10_000
GIT_SHA = 100
APP_VERSION = 200
LINKS = 20
LINK_ID = 100
WORKSPACE_SLUG = 60
GUEST_TOKEN = 100
UPSTREAM_URL = 2_000
# How long a guest read token lets its holder read the one thread.
GUEST_TOKEN_TTL = timedelta(days=30)
