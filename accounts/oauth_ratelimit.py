"""Rate limits counted in the database, so every process and every server shares one count.

Used for open client registration (RFC 7591): at most WEFT_DCR_RATE_PER_HOUR per client address.
A fixed window starts with a key's first hit; each hit is one compare-and-set UPDATE on the
key's row, so concurrent hits serialise on that row and exactly `limit` of them pass.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import ClassVar

from django.db import IntegrityError, models, transaction
from django.db.models import F
from django.http import HttpRequest, JsonResponse
from django.utils import timezone


class RateWindow(models.Model):
    """How many hits `key` made in the window that began at `started_at`."""

    key = models.CharField(max_length=200, unique=True)
    started_at = models.DateTimeField(db_index=True)
    count = models.PositiveIntegerField(default=0)

    # Declared because django-stubs only discovers the models in accounts/models.py.
    objects: ClassVar[models.Manager[RateWindow]] = models.Manager()

    class Meta:
        app_label = "accounts"
        db_table = "accounts_oauth_rate_window"

    def __str__(self) -> str:
        return f"{self.key}: {self.count} since {self.started_at:%Y-%m-%d %H:%M:%S}"


def rate_hit(*, key: str, limit: int, window: timedelta, now: datetime | None = None) -> int | None:
    """Count one hit of `key`: None when it is allowed, else the seconds until the window ends."""
    now = now or timezone.now()
    fresh_after = now - window
    live = RateWindow.objects.filter(key=key, started_at__gt=fresh_after)
    if limit <= 0:
        return math.ceil(window.total_seconds())
    for _ in range(2):
        if live.filter(count__lt=limit).update(count=F("count") + 1):
            return None
        # An ended window restarts with this hit; the condition on started_at lets only one
        # of several concurrent restarts through.
        if RateWindow.objects.filter(key=key, started_at__lte=fresh_after).update(started_at=now, count=1):
            return None
        try:
            with transaction.atomic():
                RateWindow.objects.create(key=key, started_at=now, count=1)
        except IntegrityError:
            continue  # another process created the row in between: count against it
        # Ended windows are dead weight; forget them when a new key arrives.
        RateWindow.objects.filter(started_at__lte=fresh_after).exclude(key=key).delete()
        return None
    started = live.values_list("started_at", flat=True).first() or now
    return max(1, math.ceil((started + window - now).total_seconds()))


def address_refused(
    request: HttpRequest, *, kind: str, limit: int, window: timedelta, error: str, description: str
) -> JsonResponse | None:
    """An OAuth endpoint's 429 with Retry-After once the caller's address spent `limit` hits of
    `kind` in `window`; None while it has room."""
    retry_after = rate_hit(
        key=f"{kind}:{request.META.get('REMOTE_ADDR', 'unknown')}", limit=limit, window=window
    )
    if retry_after is None:
        return None
    response = JsonResponse({"error": error, "error_description": description}, status=429)
    response["Retry-After"] = str(retry_after)
    return response
