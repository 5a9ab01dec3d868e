"""Markdown in descriptions, comments and reports renders, and an XSS corpus stays inert in all
three: no script, no event handler, no javascript:/data:/vbscript: URL, no frame, style or image."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import AgentConnection, User, Workspace
from boards.models import Comment
from boards.services import comment_add, run_complete, task_claim, task_create
from weft.markdown import render_markdown
from weft.models import Event

pytestmark = pytest.mark.django_db

XSS = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "<svg onload=alert(1)>",
    "<iframe src=https://evil.example.com></iframe>",
    '<a href="javascript:alert(1)">x</a>',
    "[x](javascript:alert(1))",
    "[x](JaVaScRiPt:alert(1))",
    "[x](jav&#x09;ascript:alert(1))",
    "[x](&#106;avascript:alert(1))",
    "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "[x](vbscript:msgbox(1))",
    "![x](https://tracker.example.com/p.gif)",
    '![x](x" onerror="alert(1))',
    '[x](https://ok.example.com "t" onmouseover="alert(1)")',
    "<style>body{display:none}</style>",
    '<div style="background:url(javascript:alert(1))">x</div>',
    '<a href="https://ok.example.com" onclick="alert(1)">x</a>',
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
    '<noscript><p title="</noscript><img src=x onerror=alert(1)>">',
    "`<script>alert(1)</script>`",
    "```\n<script>alert(1)</script>\n```",
    "<<script>script>alert(1)<</script>/script>",
    "<form action=https://evil.example.com><input name=q></form>",
    "<object data=javascript:alert(1)>",
    "<base href=https://evil.example.com/>",
    "<meta http-equiv=refresh content=0;url=https://evil.example.com>",
    "[x](https://ok.example.com)<!-- <script>alert(1)</script> -->",
]
ALLOWED_TAGS = {
    "a", "p", "br", "hr", "strong", "em", "del", "code", "pre", "blockquote", "ul", "ol", "li",
    "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip
SAFE_SCHEMES = ("http://", "https://", "mailto:")


class Elements(HTMLParser):
    """Every element and attribute the browser would build from the HTML (text is inert)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, attrs))

    def handle_comment(self, data: str) -> None:
        self.found.append(("!--", []))


def _inert(html: str) -> None:
    """No element outside the allowed ones, no event handler or style, links http(s)/mailto only."""
    parser = Elements()
    parser.feed(html)
    for tag, attrs in parser.found:
        assert tag in ALLOWED_TAGS, (tag, html)
        for name, value in attrs:
            assert not name.startswith("on") and name != "style", (tag, name, html)
            if name in ("href", "src", "action", "formaction", "data"):
                assert (value or "").strip().lower().startswith(SAFE_SCHEMES), (tag, name, value, html)


@pytest.mark.parametrize("payload", XSS)
def test_the_xss_corpus_renders_inert(payload: str) -> None:
    _inert(str(render_markdown(payload)))


def test_markdown_renders_with_clickable_links() -> None:
    text = "**Ship** _it_ — see https://example.com/a?b=1 and [the PR](https://git.example.com/p/1)"
    html = str(render_markdown(text + "\n\n- one\n- two"))
    assert "<strong>Ship</strong>" in html and "<em>it</em>" in html and "<li>one</li>" in html
    assert '<a href="https://example.com/a?b=1" rel="nofollow noopener noreferrer">' in html
    assert '<a href="https://git.example.com/p/1" rel="nofollow noopener noreferrer">the PR</a>' in html


def test_the_detector_would_see_an_unsanitized_payload() -> None:
    """The check above can fail: the raw payloads trip it."""
    with pytest.raises(AssertionError):
        _inert("<img src=x onerror=alert(1)>")
    with pytest.raises(AssertionError):
        _inert('<a href="javascript:alert(1)">x</a>')


def test_comments_descriptions_and_reports_stay_inert_on_the_pages(
    alice: User, ws_a: Workspace, agent: AgentConnection
) -> None:
    corpus = "\n\n".join(XSS)
    task = task_create(workspace=ws_a, title="Hostile text", description=corpus, review_required=True).task
    comment_add(task=task, author=alice, body=corpus[:5000])
    claim = task_claim(task_id=task.pk, connection=agent)
    run_complete(workspace=ws_a, run_id=claim.run.run_id, lease_token=claim.lease_token, outcome=corpus)
    client = Client()
    client.force_login(alice)
    for url in (
        reverse("boards:task", kwargs={"slug": ws_a.slug, "task_id": task.pk}),
        reverse("boards:inbox", kwargs={"slug": ws_a.slug}),
    ):
        page = client.get(url).content.decode()
        main = page[page.index("<main") : page.index("</main>")]
        regions = re.findall(r'<div class="(?:prose|outcome)">(.*?)</div>', main, re.S)
        assert regions, url
        for region in regions:
            _inert(region)


def test_a_comment_is_kept_with_its_event_and_shown(alice: User, ws_a: Workspace) -> None:
    task = task_create(workspace=ws_a, title="Talk about it").task
    client = Client()
    client.force_login(alice)
    url = reverse("boards:comment_add", kwargs={"slug": ws_a.slug, "task_id": task.pk})
    assert client.post(url, {"body": "Looks **good**; see https://example.com"}).status_code == 302
    comment = Comment.objects.get()
    assert (comment.task, comment.author) == (task, alice)
    assert Event.objects.filter(type="task.commented", entity_id=str(task.pk)).count() == 1
    page = client.get(reverse("boards:task", kwargs={"slug": ws_a.slug, "task_id": task.pk})).content.decode()
    assert "Looks <strong>good</strong>" in page


@pytest.mark.parametrize(
    ("body", "kept"), [("", False), ("x" * 5000, True), ("x" * 5001, False), ("a\x00b", False)]
)
def test_a_comment_is_limited_at_its_edges(alice: User, ws_a: Workspace, body: str, kept: bool) -> None:
    task = task_create(workspace=ws_a, title="Edges").task
    client = Client()
    client.force_login(alice)
    client.post(reverse("boards:comment_add", kwargs={"slug": ws_a.slug, "task_id": task.pk}), {"body": body})
    assert Comment.objects.exists() is kept
    if not kept and body:
        page = client.get(
            reverse("boards:task", kwargs={"slug": ws_a.slug, "task_id": task.pk})
        ).content.decode()
        assert body.replace("\x00", "")[:100] in page.replace("\x00", "")  # what was typed comes back


def test_a_comment_on_another_workspaces_task_is_not_found(
    alice: User, carol: User, ws_b: Workspace, ws_a: Workspace
) -> None:
    theirs = task_create(workspace=ws_b, title="Carol's").task
    client = Client()
    client.force_login(alice)
    answer = client.post(
        reverse("boards:comment_add", kwargs={"slug": ws_a.slug, "task_id": theirs.pk}), {"body": "Mine now"}
    )
    assert answer.status_code == 404 and not Comment.objects.exists()
