"""Markdown as people and agents write it in descriptions, comments and reports, rendered safely.

CommonMark (with tables and strikethrough) with raw HTML off, then nh3 (ammonia) keeps only the
tags and attributes below: links may only be http, https or mailto, open with
rel="nofollow noopener noreferrer", and no script, style, event handler, image (a remote image
would tell its server who reads the page) or other URL scheme survives. Bare URLs become links.
The result is marked safe for templates only after that.
"""

from __future__ import annotations

import functools

import nh3
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

TAGS = {
    "a", "p", "br", "hr", "strong", "em", "del", "code", "pre", "blockquote", "ul", "ol", "li",
    "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip
ATTRIBUTES = {
    "a": {"href", "title"},
    "th": {"align"},
    "td": {"align"},
    "ol": {"start"},
}
SCHEMES = {"http", "https", "mailto"}
ABSOLUTE = ("http://", "https://", "mailto:")


def _absolute_links_only(tag: str, attribute: str, value: str) -> str | None:
    """nh3 keeps relative URLs whatever the schemes; a link here must name its scheme."""
    if attribute == "href" and not value.strip().lower().startswith(ABSOLUTE):
        return None
    return value


@functools.cache
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False, "linkify": True, "breaks": True}).enable(
        ["table", "strikethrough", "linkify"]
    )


def render_markdown(text: str) -> SafeString:
    """`text` as sanitized HTML."""
    html = _parser().render(text or "")
    clean = nh3.clean(
        html,
        tags=TAGS,
        attributes=ATTRIBUTES,
        url_schemes=SCHEMES,
        link_rel="nofollow noopener noreferrer",
        strip_comments=True,
        attribute_filter=_absolute_links_only,
    )
    return mark_safe(clean)  # noqa: S308 -- sanitized by nh3 just above
