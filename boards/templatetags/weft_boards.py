"""Small display helpers for the board, task and Inbox pages."""

from __future__ import annotations

from datetime import datetime, timedelta

from django import template
from django.utils import timezone

register = template.Library()

# A message whose tags hold this prefix and a URL is a toast with an Undo button posting there.
UNDO_TAG = "undo:"


@register.filter
def span(value: timedelta | None) -> str:
    """A short human duration: `45 s`, `12 min`, `3 h 5 min`, `2 d 4 h`."""
    if value is None:
        return ""
    seconds = max(int(value.total_seconds()), 0)
    if seconds < 60:
        return f"{seconds} s"
    minutes = seconds // 60
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h" if hours else f"{days} d"


@register.filter
def since(value: datetime | None) -> str:
    """How long ago, as a short duration."""
    if value is None:
        return ""
    return span(timezone.now() - value)


@register.filter
def percent(part: float | int | None, whole: float | int | None) -> int:
    if not whole:
        return 0
    return max(0, min(100, round(100 * float(part or 0) / float(whole))))


@register.filter
def attention_fill(attention: object) -> int:
    """How full the attention meter is: the larger of the item and the minute share."""
    if getattr(attention, "full", False):
        return 100
    items = percent(getattr(attention, "waiting", 0), getattr(attention, "limit", 0))
    minutes = percent(getattr(attention, "minutes", 0), getattr(attention, "minute_limit", 0))
    return max(items, minutes)


@register.filter
def attention_counts(attention: object) -> str:
    """The meter's numbers: `2/5 · 30/45 min`."""
    a = attention
    return (
        f"{getattr(a, 'waiting', 0)}/{getattr(a, 'limit', 0)}"
        f" · {getattr(a, 'minutes', 0)}/{getattr(a, 'minute_limit', 0)} min"
    )


@register.filter
def attention_short(attention: object) -> str:
    """The meter's label: `Attention 2/5 · 30/45 min`."""
    return f"Attention {attention_counts(attention)}"


@register.filter
def attention_sentence(attention: object) -> str:
    """What the meter counts, in words: `2 of 5 items wait on people; 30 of 45 minutes of review.`"""
    a = attention
    return (
        f"{getattr(a, 'waiting', 0)} of {getattr(a, 'limit', 0)} items wait on people; "
        f"{getattr(a, 'minutes', 0)} of {getattr(a, 'minute_limit', 0)} minutes of review."
    )


@register.filter
def undo_url(message: object) -> str:
    """The URL a toast's Undo button posts to; empty for a message without one."""
    tags = str(getattr(message, "extra_tags", "") or "").split()
    return next((t.removeprefix(UNDO_TAG) for t in tags if t.startswith(UNDO_TAG)), "")


@register.filter
def markdown(value: str | None) -> str:
    """Markdown rendered and sanitized (weft.markdown): safe to show as HTML."""
    from weft.markdown import render_markdown

    return render_markdown(value or "")
