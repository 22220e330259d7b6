"""A download's file name, after the question (or the widget or saved query that asks it) and its window:
``lcp-p75-by-release-30d.csv`` rather than ``explore.csv`` (docs/explore.md, Downloads).

The name is a safe slug: ASCII letters, digits and dashes only (accents folded, every other character —
slashes, dots, quotes, control characters — a dash), so it can sit in a ``Content-Disposition`` header and
on any file system without escaping, and never names a path."""

from __future__ import annotations

import re
import unicodedata

from stacklens.explore.columns import header
from stacklens.explore.query import Query

MAX_STEM = 80  # characters of the name before its window and extension
FALLBACK = "explore"


def slug(text: str) -> str:
    """``"LCP p75 / release (é)"`` → ``"lcp-p75-release-e"``: lower-case ASCII letters, digits and single
    dashes, at most :data:`MAX_STEM` characters ('' when nothing is left)."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z0-9]+", "-", folded.lower()).strip("-")[:MAX_STEM].strip("-")


def question_title(query: Query) -> str:
    """The question in words: its aggregates as their headers name them and its group-by, ``LCP p75 by
    release``."""
    # Each aggregate as its column header says it, without the unit: "LCP p75 (ms)" → "LCP p75".
    asked = [header(aggregate).split(" (", 1)[0] for aggregate in query.aggregates]
    title = " and ".join(asked) or query.dataset.key
    if query.group_by:
        title += " by " + " and ".join(g.removeprefix("tag:") for g in query.group_by)
    return title


def window_words(query: Query) -> str:
    """The window as a name part: its named range (``30d``) or its days (``2026-11-01-to-2026-11-28``)."""
    window = query.window
    if window.range:
        return window.range
    return f"{window.since:%Y-%m-%d}-to-{window.until:%Y-%m-%d}"


def download_name(query: Query, fmt: str, title: str = "") -> str:
    """The file name of ``query``'s download as ``fmt``: ``title`` (a widget's or saved query's name) or the
    question in words, then the window."""
    stem = slug(title) or slug(question_title(query)) or FALLBACK
    return f"{stem}-{slug(window_words(query))}.{slug(fmt) or 'bin'}"
