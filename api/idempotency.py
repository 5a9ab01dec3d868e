"""Idempotency keys: a retried write returns its first answer and changes nothing.

A key is taken in the write's own transaction (the unique constraint decides between two racing
requests) and holds the write's answer, sealed, for TTL: key, write and answer commit together.
The same key with another request is refused. A failure nobody planned for, a request that dies
on the way, or a refusal before the write ran (authentication, suspension, the plan's meter)
leaves the key free, so a retry runs the write.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from cryptography.fernet import Fernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q

from api.auth import ApiCaller
from api.models import IdempotencyKey
from weft.errors import WeftError, invalid_argument
from weft.hints import Hint, wait

HEADER = "Idempotency-Key"
TTL = timedelta(hours=24)
# A request still unanswered after this long has died (every call answers within seconds).
ABANDONED = timedelta(minutes=2)
KEY_MAX = 255


@dataclass(frozen=True)
class Answer:
    status: int
    body: dict[str, Any]


@functools.cache
def _box(secret_key: str) -> Fernet:
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=b"weft idempotent answers")
    return Fernet(base64.urlsafe_b64encode(derived.derive(secret_key.encode())))


def request_hash(method: str, path: str, args: dict[str, Any]) -> str:
    canonical = json.dumps([method, path, args], sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def checked_key(raw: str | None, *, fix_hint: Hint) -> str | None:
    """The header's key, or None when none was sent; a key that cannot be one is refused."""
    if raw is None:
        return None
    if not 1 <= len(raw) <= KEY_MAX or not raw.isprintable() or not raw.isascii():
        raise invalid_argument(HEADER, f"1 to {KEY_MAX} printable ASCII characters", fix_hint=fix_hint)
    return raw


def _rows(caller: ApiCaller, key: str) -> Any:
    return IdempotencyKey.objects.filter(
        workspace_id=caller.workspace_id, credential=caller.credential, key=key
    )


def key_answer(*, caller: ApiCaller, key: str, digest: str, now: datetime, fix_hint: Hint) -> Answer | None:
    """The first answer to the key, to send again; None when the key is free (for key_claim)."""
    # A key past its TTL is free again, and so is one whose request died before it answered.
    _rows(caller, key).filter(
        Q(expires_at__lte=now) | Q(status=None, created_at__lte=now - ABANDONED)
    ).delete()
    row = _rows(caller, key).first()
    if row is None:
        return None
    if row.status is None:
        raise WeftError(
            "conflict",
            f"a request with {HEADER} {key!r} is still running",
            details={"header": HEADER},
            fix=wait("the first request with this key answers; send the same request again in a few seconds"),
        )
    if row.request_hash != digest:
        raise WeftError(
            "idempotency_key_reused",
            f"{HEADER} {key!r} was first sent with another request; a new request needs a new key",
            details={"header": HEADER, "key": key},
            fix=fix_hint,
        )
    return Answer(row.status, json.loads(_box(settings.SECRET_KEY).decrypt(row.response.encode())))


def key_claim(*, caller: ApiCaller, key: str, digest: str, now: datetime) -> bool:
    """Take the key inside the write's transaction; False when a racing request took it first.

    The caller runs the write and key_store in the same transaction, so the key, the write and
    its answer commit together or not at all: a request that dies on the way (a killed worker, a
    lost database) leaves nothing behind, and its retry runs the write once. A racing request
    with the same key waits on this row's unique index until we commit, then replays our answer.
    """
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("key_claim() must run inside the write's transaction")
    try:
        with transaction.atomic():
            IdempotencyKey.objects.create(
                workspace_id=caller.workspace_id,
                credential=caller.credential,
                key=key,
                request_hash=digest,
                created_at=now,
                expires_at=now + TTL,
            )
    except IntegrityError:
        return False
    return True


def key_store(*, caller: ApiCaller, key: str, answer: Answer) -> None:
    sealed = _box(settings.SECRET_KEY).encrypt(json.dumps(answer.body).encode()).decode()
    _rows(caller, key).update(status=answer.status, response=sealed)


def keys_purge(*, now: datetime) -> int:
    """Forget every key past its TTL."""
    return IdempotencyKey.objects.filter(expires_at__lte=now).delete()[0]
