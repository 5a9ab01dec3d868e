"""PURE: Standard Webhooks signing secrets and signatures.

A secret is `whsec_` + base64 of 24 random bytes. The signature of one attempt is
`v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">`, keyed by the secret's
base64-decoded bytes (https://www.standardwebhooks.com/).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

PREFIX = "whsec_"
SECRET_BYTES = 24


def new_secret() -> str:
    return PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def signature(*, secret: str, message_id: str, timestamp: int, body: str) -> str:
    key = base64.b64decode(secret.removeprefix(PREFIX))
    signed = f"{message_id}.{timestamp}.{body}".encode()
    digest = hmac.new(key, signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def headers(*, secret: str, message_id: str, timestamp: int, body: str) -> dict[str, str]:
    """The Standard Webhooks headers of one attempt."""
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": signature(secret=secret, message_id=message_id, timestamp=timestamp, body=body),
        "content-type": "application/json",
    }
