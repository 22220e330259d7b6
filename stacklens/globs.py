"""Glob matching in time linear in the value matched: ``*`` any run of characters, ``?`` one character,
``[abc]`` / ``[a-z]`` / ``[!abc]`` one of (or none of) a set, as :mod:`fnmatch` reads them.

Why not :func:`fnmatch.fnmatchcase`: a rule that may match at any ``/`` of a path ran it once per ``/``,
each run scanning the rest of the path, so one frame with a 65,536-character path took 65 s under 21 rules
(issue 62). Here a pattern is compiled once into its star-free pieces, each a fixed-width expression with no
repetition (so the regular-expression engine never backtracks over a ``*``), and a match walks the value
once: the first piece at the leftmost start allowed, each middle piece at its leftmost place after the one
before, the last piece at the value's end. Leftmost is always right for a glob (a ``*`` can take whatever
lies between), so nothing is tried twice. The cost is at most the value's length times the longest piece's,
and patterns are bounded by :data:`MAX_PATTERN`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

# The longest pattern compiled; a rule's pattern longer than this is refused where the rule is written.
MAX_PATTERN = 1_024


@dataclass(frozen=True)
class Glob:
    """A compiled glob: its pieces between ``*`` (each a fixed-width expression) and whether a ``*``
    separates them (``starred``: the pattern held at least one ``*``)."""

    pattern: str
    pieces: tuple[re.Pattern[str], ...]
    widths: tuple[int, ...]
    starred: bool
    # The first piece right after a "/" (one search, not one try per "/": a path of 1,024 characters has up
    # to 512 places to start). The "/" leads the expression so the engine's fast scan for a literal start
    # applies.
    first_after_slash: re.Pattern[str]

    def match(self, value: str) -> bool:
        """Whether the whole of ``value`` matches."""
        return self.match_from(value, (0,))

    def match_from(self, value: str, starts: Iterable[int]) -> bool:
        """Whether ``value[s:]`` matches for one of ``starts`` (ascending positions)."""
        end = len(value)
        first, first_width = self.pieces[0], self.widths[0]
        if not self.starred:
            # No star: the pattern is as wide as what it matches, so only one start can fit.
            at = end - first_width
            return at >= 0 and at in set(starts) and first.match(value, at) is not None
        for start in starts:
            if start + first_width <= end and first.match(value, start) is not None:
                # The leftmost start whose first piece fits leaves the most room for the rest: the
                # only one worth trying.
                return self._rest(value, start + first_width)
        return False

    def match_after_slash(self, value: str, *, head: bool = True) -> bool:
        """Whether ``value[s:]`` matches for a non-empty rest starting right after a ``/`` of ``value``, or
        at its start when ``head`` and it does not start with ``/`` (what :meth:`match_from` answers for
        those starts, in one search)."""
        end = len(value)
        if not value:
            return False
        lowest = 0 if head and value[0] != "/" else 1  # a start at 1 or later needs a "/" before it
        if not self.starred:
            at = end - self.widths[0]
            if at >= end or at < lowest or (at > 0 and value[at - 1] != "/"):
                return False
            return self.pieces[0].match(value, at) is not None
        if self.widths[0]:
            if lowest == 0 and self.pieces[0].match(value, 0) is not None:
                return self._rest(value, self.widths[0])
            found = self.first_after_slash.search(value)
            return found is not None and self._rest(value, found.end())
        # The pattern starts with "*": the leftmost start allowed is the one to try.
        if lowest == 0:
            return self._rest(value, 0)
        slash = value.find("/")
        return 0 <= slash < end - 1 and self._rest(value, slash + 1)

    def _rest(self, value: str, at: int) -> bool:
        """The pieces after the first (each after a ``*``) within ``value[at:]``."""
        end = len(value)
        last, last_width = self.pieces[-1], self.widths[-1]
        for piece in self.pieces[1:-1]:
            found = piece.search(value, at)
            if found is None:
                return False
            at = found.end()
        tail = end - last_width
        return tail >= at and last.match(value, tail) is not None


def _class(pattern: str, i: int) -> tuple[str, int] | None:
    """The character class starting at ``pattern[i] == "["`` as a regular expression, and the index after
    it; ``None`` when the ``[`` is a plain character (no closing ``]``), as fnmatch reads it."""
    j = i + 1
    if j < len(pattern) and pattern[j] == "!":
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        j += 1
    close = pattern.find("]", j)
    if close < 0:
        return None
    body = pattern[i + 1 : close]
    negate = body.startswith("!")
    if negate:
        body = body[1:]
    items: list[str] = []
    k = 0
    while k < len(body):
        if k + 2 < len(body) and body[k + 1] == "-":
            low, high = body[k], body[k + 2]
            if low <= high:  # fnmatch drops an empty range such as z-a
                items.append(f"{re.escape(low)}-{re.escape(high)}")
            k += 3
        else:
            items.append(re.escape(body[k]))
            k += 1
    if not items:
        return ("." if negate else "(?!)"), close + 1
    return f"[{'^' if negate else ''}{''.join(items)}]", close + 1


@lru_cache(maxsize=4_096)
def compile_glob(pattern: str) -> Glob:
    """``pattern`` compiled (cached: the same rules are matched every minute)."""
    pieces: list[list[str]] = [[]]
    widths = [0]
    starred = False
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "*":
            starred = True
            if pieces[-1] or len(pieces) == 1:
                pieces.append([])
                widths.append(0)
            i += 1
            continue
        if char == "?":
            part, i = ".", i + 1
        elif char == "[" and (found := _class(pattern, i)) is not None:
            part, i = found
        else:
            part, i = re.escape(char), i + 1
        pieces[-1].append(part)
        widths[-1] += 1
    if starred and len(pieces) == 1:
        pieces.append([])
        widths.append(0)
    compiled = tuple(re.compile("".join(p), re.DOTALL) for p in pieces)
    after_slash = re.compile("/" + "".join(pieces[0]), re.DOTALL)
    return Glob(pattern, compiled, tuple(widths), starred, after_slash)


def glob_match(pattern: str, value: str) -> bool:
    """Whether all of ``value`` matches ``pattern`` (case as given)."""
    return compile_glob(pattern).match(value)


__all__ = ["MAX_PATTERN", "Glob", "compile_glob", "glob_match"]
