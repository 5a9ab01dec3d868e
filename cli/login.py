"""`weft login` and `weft logout`: the token the CLI signs in with, kept in the config file.

`--token TOKEN` saves an OAuth access token for Weft's API (the audience of /api/mcp). The OAuth
2.0 device authorization grant (RFC 8628) is not served yet, so a token is required.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from cli import config
from cli.client import USAGE


def login(parsed: argparse.Namespace) -> int:
    url = config.base_url(parsed.url)
    if parsed.token:
        config.update(url=url, token=parsed.token, client_id=None, refresh_token=None, run=None)
        print(f"Signed in to {url} with the given token.\nNext: weft work")
        return 0
    print(
        "weft: give --token TOKEN (an OAuth access token for Weft); sign-in in the browser is not served yet",
        file=sys.stderr,
    )
    return USAGE


def logout(parsed: argparse.Namespace) -> int:
    had = config.forget()
    print("Signed out; the saved token is removed." if had else "Not signed in.")
    print(f"Next: weft login --url {config.base_url(parsed.url)}")
    return 0


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("login", help="sign in with --token TOKEN")
    p.add_argument("--token", help="an OAuth access token for Weft's API")
    p.set_defaults(handler=login)
    p = sub.add_parser("logout", help="forget the saved token")
    p.set_defaults(handler=logout)
