"""Comments' markdown as HTML that carries nothing of the author's but text and the markup CommonMark makes.

markdown-it-py in CommonMark mode with raw HTML off: ``<script>`` in a comment is shown as text, never
parsed. Its link validation refuses ``javascript:``, ``vbscript:``, ``file:`` and ``data:`` URLs (they stay
text). Images are off (a comment must not make every reader's browser fetch a URL of the author's choosing),
links carry ``rel="noopener noreferrer nofollow"``, and ``@handle`` becomes a mention when it names a member
(:func:`mention_handles`). Every piece of text goes through markdown-it's escaping; the result is safe to
put in a page as it is."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

# `@alice`, `@alice.smith`, `@alice@example.com` (a whole e-mail), not inside a word or an e-mail address.
MENTION = re.compile(r"@([A-Za-z0-9][\w.+-]*(?:@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)?)")
_WORD = re.compile(r"[\w.+-]")


def mention_handles(members: Sequence[tuple[int, str, str]]) -> dict[str, int]:
    """Handle (lower-case) → user id for members given as (user id, e-mail, name): the whole e-mail, the
    e-mail's local part and the name without spaces, each only when it names one member."""
    seen: dict[str, set[int]] = {}
    for user_id, email, name in members:
        for handle in {email.lower(), email.split("@", 1)[0].lower(), "".join(name.split()).lower()}:
            if handle:
                seen.setdefault(handle, set()).add(user_id)
    return {handle: next(iter(ids)) for handle, ids in seen.items() if len(ids) == 1}


def mentioned(body: str, handles: Mapping[str, int]) -> list[int]:
    """The members a comment mentions (in order, once each)."""
    found: dict[int, None] = {}
    for match in MENTION.finditer(body or ""):
        if match.start() and _WORD.match(body[match.start() - 1]):
            continue
        user_id = _handle_of(match.group(1), handles)
        if user_id is not None:
            found[user_id] = None
    return list(found)


def _handle_of(text: str, handles: Mapping[str, int]) -> int | None:
    # A sentence's full stop is not part of the handle ("thanks @alice.").
    for candidate in (text, text.rstrip(".-+")):
        if candidate.lower() in handles:
            return handles[candidate.lower()]
    return None


def _mention_rule(state: StateInline, silent: bool) -> bool:
    if state.src[state.pos] != "@" or (state.pos and _WORD.match(state.src[state.pos - 1])):
        return False
    match = MENTION.match(state.src, state.pos)
    handles: Mapping[str, int] = state.env.get("handles", {}) if isinstance(state.env, dict) else {}
    if match is None:
        return False
    text = match.group(1)
    if text.lower() not in handles:
        text = text.rstrip(".-+")
        if text.lower() not in handles:
            return False
    if not silent:
        token = state.push("mention", "", 0)
        token.content = text
    state.pos += 1 + len(text)
    return True


def _render_mention(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    return f'<span class="mention">@{escape(tokens[idx].content)}</span>'


def _render_link_open(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    tokens[idx].attrSet("rel", "noopener noreferrer nofollow")
    return self.renderToken(tokens, idx, options, env)


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.disable("image")
    md.inline.ruler.before("emphasis", "mention", _mention_rule)
    md.add_render_rule("mention", _render_mention)
    md.add_render_rule("link_open", _render_link_open)
    return md


_MD = _parser()


def render(body: str, handles: Mapping[str, int] | None = None) -> str:
    """The comment as HTML (safe as it is); ``handles``: :func:`mention_handles` of the organization."""
    env: dict[str, Any] = {"handles": dict(handles or {})}
    return str(_MD.render(body or "", env))
