"""A ticket's description as blocks, rendered per tracker: Markdown (GitHub, GitLab, Linear), Atlassian
Document Format (Jira Cloud REST v3) or plain text (Jira Data Center REST v2).

Building blocks rather than one Markdown string keeps the event data literal: a title full of ``*`` or ``<``
never becomes markup in any tracker (code spans, code blocks and ADF text nodes carry it as it is).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Block:
    kind: str  # "heading" | "paragraph" | "code" | "facts" | "link"
    text: str = ""
    url: str = ""
    facts: tuple[tuple[str, str], ...] = ()


@dataclass
class Document:
    blocks: list[Block] = field(default_factory=list)

    def heading(self, text: str) -> Document:
        self.blocks.append(Block("heading", text))
        return self

    def paragraph(self, text: str) -> Document:
        self.blocks.append(Block("paragraph", text))
        return self

    def code(self, text: str) -> Document:
        self.blocks.append(Block("code", text))
        return self

    def facts(self, pairs: list[tuple[str, str]]) -> Document:
        self.blocks.append(Block("facts", facts=tuple(pairs)))
        return self

    def link(self, text: str, url: str) -> Document:
        self.blocks.append(Block("link", text, url))
        return self


def _longest_tick_run(text: str) -> int:
    longest, run = 0, 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return longest


def _fence(text: str) -> str:
    """A code fence longer than any run of backticks inside, so the text cannot close it."""
    return "`" * max(3, _longest_tick_run(text) + 1)


def _inline_code(text: str) -> str:
    """A code span the text cannot close (CommonMark: a longer backtick string, padded by spaces)."""
    run = _longest_tick_run(text)
    if not run:
        return f"`{text}`" if text else ""
    ticks = "`" * (run + 1)
    return f"{ticks} {text} {ticks}"


def to_markdown(doc: Document) -> str:
    out: list[str] = []
    for block in doc.blocks:
        if block.kind == "heading":
            out.append(f"### {block.text}")
        elif block.kind == "paragraph":
            out.append(block.text)
        elif block.kind == "code":
            fence = _fence(block.text)
            out.append(f"{fence}\n{block.text}\n{fence}")
        elif block.kind == "facts":
            out.append("\n".join(f"- **{k}:** {_inline_code(v)}" for k, v in block.facts))
        elif block.kind == "link":
            out.append(f"[{block.text}]({block.url})")
    return "\n\n".join(out)


def to_plain(doc: Document) -> str:
    out: list[str] = []
    for block in doc.blocks:
        if block.kind == "facts":
            out.append("\n".join(f"{k}: {v}" for k, v in block.facts))
        elif block.kind == "link":
            out.append(f"{block.text}: {block.url}")
        else:
            out.append(block.text)
    return "\n\n".join(out)


def _text(text: str, **mark: Any) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "text", "text": text}
    if mark:
        node["marks"] = [mark]
    return node


def to_adf(doc: Document) -> dict[str, Any]:
    """Atlassian Document Format, version 1: ``{"type": "doc", "version": 1, "content": [...]}``. Empty
    text nodes are not allowed in ADF, so empty values are left out."""
    content: list[dict[str, Any]] = []
    for block in doc.blocks:
        if block.kind == "heading" and block.text:
            content.append({"type": "heading", "attrs": {"level": 3}, "content": [_text(block.text)]})
        elif block.kind == "paragraph" and block.text:
            content.append({"type": "paragraph", "content": [_text(block.text)]})
        elif block.kind == "code" and block.text:
            content.append({"type": "codeBlock", "attrs": {}, "content": [_text(block.text)]})
        elif block.kind == "facts":
            items = [
                {
                    "type": "listItem",
                    "content": [
                        {
                            "type": "paragraph",
                            "content": [_text(f"{k}: ", type="strong"), _text(v, type="code")],
                        }
                    ],
                }
                for k, v in block.facts
                if v
            ]
            if items:
                content.append({"type": "bulletList", "content": items})
        elif block.kind == "link":
            link = _text(block.text, type="link", attrs={"href": block.url})
            content.append({"type": "paragraph", "content": [link]})
    return {"type": "doc", "version": 1, "content": content}
