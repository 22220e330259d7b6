"""A ticket's description keeps event text literal in every format: Markdown code fences longer than any
backtick run inside, ADF text nodes never empty, plain text as it is."""

from __future__ import annotations

from typing import Any

from stacklens.integrations.document import Document, to_adf, to_markdown, to_plain
from stacklens.integrations.prefill import stack_top


def test_event_text_cannot_close_the_markdown_fence_or_become_markup() -> None:
    hostile = "```\n# not a heading\n<script>alert(1)</script> **bold**"
    doc = Document().facts([("Error", "a `tick` and **stars**")]).code(hostile)
    markdown = to_markdown(doc)
    assert "- **Error:** `` a `tick` and **stars** ``" in markdown
    assert "````\n" + hostile + "\n````" in markdown


def test_adf_leaves_out_empty_values_and_keeps_text_literal() -> None:
    doc = (
        Document()
        .heading("Error")
        .paragraph("")
        .facts([("Culprit", ""), ("Level", "error")])
        .code("<b>x</b>")
    )
    adf = to_adf(doc)
    assert [b["type"] for b in adf["content"]] == ["heading", "bulletList", "codeBlock"]
    assert len(adf["content"][1]["content"]) == 1
    assert adf["content"][2]["content"][0]["text"] == "<b>x</b>"
    assert to_plain(doc).endswith("Level: error\n\n<b>x</b>")


def test_stack_top_keeps_the_raised_exception_and_its_top_frames() -> None:
    frames = [{"function": f"f{i}", "filename": "app.py", "lineno": i} for i in range(12)]
    chain: list[dict[str, Any]] = [{"type": "ValueError", "value": "bad", "frames": frames}]
    text = stack_top(chain)
    lines = text.splitlines()
    assert lines[0] == "ValueError: bad" and lines[1] == "  at f0 (app.py:0)"
    assert len(lines) == 10 and lines[-1] == "  … 4 more frames"
    assert stack_top([]) == ""
