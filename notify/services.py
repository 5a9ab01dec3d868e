"""People's notification writes: a device's push subscription, its removal, their settings."""

from __future__ import annotations

import re
from datetime import time
from typing import Any

from django.conf import settings
from django.db import transaction

from accounts.models import User
from hooks.addresses import is_loopback_host, target
from hooks.rules import FilterError
from notify.models import NotifySettings, PushSubscription
from weft.errors import invalid_argument
from weft.hints import wait

KEY_MAX = 200
# The browser's keys are base64url (RFC 8291); anything else (a NUL, a space) is not a key.
BASE64URL = re.compile(r"[A-Za-z0-9_-]+={0,2}")


def allowed_endpoint(url: str) -> bool:
    """Only the browsers' push services (WEFT_PUSH_HOSTS) — Weft posts to this URL, so anything
    else would let a person aim Weft's server at any address. In debug, loopback too."""
    try:
        parts = target(url, debug=settings.DEBUG)
    except FilterError:
        return False
    if settings.DEBUG and is_loopback_host(parts.host):
        return True
    return parts.scheme == "https" and any(
        parts.host == host or (host.startswith("*.") and parts.host.endswith(host[1:]))
        for host in settings.WEFT_PUSH_HOSTS
    )


def push_subscribe(*, user: User, data: Any, user_agent: str = "") -> PushSubscription:
    """Store the browser's PushSubscription JSON ({endpoint, keys: {p256dh, auth}}) for `user`.

    The same endpoint again (a re-subscribe, another tab) updates its keys; an endpoint another
    person registered moves to this one (the browser's profile changed hands)."""
    endpoint = data.get("endpoint") if isinstance(data, dict) else None
    keys = data.get("keys") if isinstance(data, dict) else None
    p256dh = keys.get("p256dh") if isinstance(keys, dict) else None
    auth = keys.get("auth") if isinstance(keys, dict) else None
    if not isinstance(endpoint, str) or not allowed_endpoint(endpoint):
        raise invalid_argument(
            "endpoint", "not a push service's URL", fix_hint=wait("the browser subscribes again")
        )
    for name, value in (("keys.p256dh", p256dh), ("keys.auth", auth)):
        if not isinstance(value, str) or not value or len(value) > KEY_MAX or not BASE64URL.fullmatch(value):
            raise invalid_argument(
                name, "missing or not a key", fix_hint=wait("the browser subscribes again")
            )
    assert isinstance(p256dh, str) and isinstance(auth, str)
    with transaction.atomic():
        found, _ = PushSubscription.objects.update_or_create(
            endpoint=endpoint,
            defaults={"user": user, "p256dh": p256dh, "auth": auth, "user_agent": user_agent[:300]},
        )
    return found


def push_unsubscribe(*, user: User, endpoint: str) -> bool:
    """Forget this person's device; False when it was not theirs (or not known)."""
    deleted, _ = PushSubscription.objects.filter(user=user, endpoint=endpoint).delete()
    return deleted > 0


def settings_for(user: User) -> NotifySettings:
    found, _ = NotifySettings.objects.get_or_create(user=user)
    return found


def settings_save(
    *, user: User, push: bool, email: bool, quiet_start: time | None, quiet_end: time | None, time_zone: str
) -> NotifySettings:
    found = settings_for(user)
    found.push, found.email = push, email
    found.quiet_start, found.quiet_end, found.time_zone = quiet_start, quiet_end, time_zone
    found.save()
    return found


def devices_of(user: User) -> list[PushSubscription]:
    return list(PushSubscription.objects.filter(user=user).order_by("-created_at", "-pk"))
