"""`weft login` and `weft logout`: the sign-in the CLI keeps in the config file.

`weft login` signs in through the browser (RFC 8628, cli/device.py): the person enters the code
the terminal prints and picks the workspace. `--token TOKEN` saves a token instead (a personal
access token, or an OAuth access token for Weft's API). `weft logout` revokes a browser sign-in's
tokens at the server, then forgets the file.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from cli import config, device
from cli.client import OK, UNAUTHENTICATED


def login(parsed: argparse.Namespace) -> int:
    url = config.base_url(parsed.url)
    if parsed.token:
        config.update(url=url, token=parsed.token, client_id=None, refresh_token=None, run=None)
        print(f"Signed in to {url} with the given token.\nNext: weft work")
        return OK
    try:
        tokens = device.device_login(url)
    except device.LoginFailed as failed:
        print(f"\nweft: sign-in failed: {failed.error} {failed.description}".rstrip(), file=sys.stderr)
        print(f"Fix: weft login --url {url}")
        return UNAUTHENTICATED
    config.update(
        url=url,
        token=tokens.access_token,
        refresh_token=tokens.refresh_token,
        client_id=device.CLIENT_ID,
        run=None,
    )
    print(f"\nSigned in to {url}.\nNext: weft work")
    return OK


def logout(parsed: argparse.Namespace) -> int:
    saved = config.load()
    url = config.base_url(parsed.url)
    if saved.get("client_id") == device.CLIENT_ID and saved.get("token"):
        revoked = device.revoke(url, device.Tokens(saved["token"], saved.get("refresh_token")))
        print(
            "Signed out; the tokens are revoked."
            if revoked
            else "Signed out; Weft did not confirm the revocation."
        )
    elif saved.get("token"):
        print("Signed out. The token given to --token stays valid until it expires or is revoked in Weft.")
    else:
        print("Not signed in.")
    config.forget()
    print(f"Next: weft login --url {url}")
    return OK


def refreshed(url: str) -> str | None:
    """The saved browser sign-in renewed with its refresh token (saved again), or None."""
    saved = config.load()
    if saved.get("client_id") != device.CLIENT_ID or not saved.get("refresh_token"):
        return None
    tokens = device.refresh(url, saved["refresh_token"])
    if tokens is None:
        return None
    config.update(token=tokens.access_token, refresh_token=tokens.refresh_token)
    return tokens.access_token


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("login", help="sign in through the browser, or with --token TOKEN")
    p.add_argument("--token", help="a personal access token, or an OAuth access token for Weft's API")
    p.set_defaults(handler=login)
    p = sub.add_parser("logout", help="revoke the browser sign-in and forget the saved token")
    p.set_defaults(handler=logout)
