"""Small display helpers for the board, task and Inbox pages."""

from __future__ import annotations

from datetime import datetime, timedelta

from django import template
from django.utils import timezone

register = template.Library()


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
def markdown(value: str | None) -> str:
    """Markdown rendered and sanitized (weft.markdown): safe to show as HTML."""
    from weft.markdown import render_markdown

    return render_markdown(value or "")
