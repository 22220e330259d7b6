"""Comments' markdown: what a comment can and cannot put in a page (the project's hostile payloads among
others), links with rel=noopener, and mentions of members only."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from stacklens.issues.comment_markdown import mention_handles, mentioned, render
from tests.dashboards.test_browser import HOSTILE

HANDLES = mention_handles(
    [(1, "alice@example.test", "Alice Smith"), (2, "bob@example.test", ""), (3, "bob@other.test", "")]
)

PAYLOADS = [
    HOSTILE,
    "<svg onload=alert(1)>",
    '<a href="javascript:alert(1)">x</a>',
    "[click](javascript:alert(1))",
    "[click](JaVaScRiPt:alert(1))",
    "[click](vbscript:msgbox(1))",
    "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "<javascript:alert(1)>",
    "![x](https://evil.test/pixel.png)",
    '[x](https://ok.test/" onmouseover="alert(1))',
    "<iframe src=https://evil.test></iframe>",
    "<style>body{display:none}</style>",
    "`<b>`  <b>bold</b>",
]


# What CommonMark itself makes; nothing else may appear as a tag or an attribute.
ALLOWED_TAGS = {"p", "a", "code", "pre", "strong", "em", "ul", "ol", "li", "span", "blockquote", "br", "hr"}
ALLOWED_TAGS |= {"h1", "h2", "h3", "h4", "h5", "h6"}
ALLOWED_ATTRIBUTES = {"href", "rel", "class", "start", "title"}


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.seen.append((tag, attrs))


@pytest.mark.parametrize("payload", PAYLOADS)
def test_no_html_of_the_author_gets_through(payload: str) -> None:
    html = render(payload, HANDLES)
    parser = _Tags()
    parser.feed(html)
    for tag, attrs in parser.seen:
        assert tag in ALLOWED_TAGS, (payload, html)
        for name, value in attrs:
            assert name in ALLOWED_ATTRIBUTES, (payload, html)
            if name == "href":
                assert (value or "").startswith(("https://", "http://", "mailto:")), (payload, html)
            if tag == "a":
                assert ("rel", "noopener noreferrer nofollow") in attrs


def test_markdown_and_links() -> None:
    html = render("**bold** _it_ `code`\n\n- one\n- two\n\n[docs](https://example.test/a?b=1&c=2)")
    assert "<strong>bold</strong>" in html and "<em>it</em>" in html and "<code>code</code>" in html
    assert "<li>one</li>" in html
    assert '<a href="https://example.test/a?b=1&amp;c=2" rel="noopener noreferrer nofollow">docs</a>' in html


def test_mentions() -> None:
    body = "thanks @alice. cc @bob@example.test, not @bob (two Bobs), not me@alice nor @nobody; @AliceSmith"
    assert mentioned(body, HANDLES) == [1, 2]
    html = render(body, HANDLES)
    assert '<span class="mention">@alice</span>.' in html
    assert '<span class="mention">@bob@example.test</span>' in html
    assert "@bob (two Bobs)" in html and "me@alice" in html and "@nobody" in html
    assert '<span class="mention">@AliceSmith</span>' in html
    assert render("@<script>", HANDLES) == "<p>@&lt;script&gt;</p>\n"
