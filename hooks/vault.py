"""Signing secrets at rest: encrypted (Fernet) with a key derived from SECRET_KEY.

A webhook secret must stay usable for signing, so unlike tokens it cannot be hashed. The key
is HKDF-SHA256 of SECRET_KEY with a purpose label, so it is never the SECRET_KEY itself.
Rotating SECRET_KEY makes existing secrets unreadable: those subscriptions must be recreated.
"""

from __future__ import annotations

import base64
import functools

from cryptography.fernet import Fernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings

PURPOSE = b"weft webhook signing secrets"


@functools.cache
def _fernet(secret_key: str) -> Fernet:
    key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=PURPOSE).derive(secret_key.encode())
    return Fernet(base64.urlsafe_b64encode(key))


def seal(secret: str) -> str:
    return _fernet(settings.SECRET_KEY).encrypt(secret.encode()).decode()


def unseal(sealed: str) -> str:
    return _fernet(settings.SECRET_KEY).decrypt(sealed.encode()).decode()
