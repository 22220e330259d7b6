"""What a rule's ``type`` finds in one value: the spans of text to mask, hash or remove.

The built-in types are our own patterns, each with bounded repetition (``re``'s backtracking stays linear in
the text) and a check that spares false hits (Luhn for cards, mod 97 for IBANs, :mod:`ipaddress` for IPs). A
tenant's ``pattern`` runs on RE2 (google-re2): its time is linear in the text whatever the pattern, so no
pattern can stall ingest; RE2 refuses what it cannot run that way (look-arounds, back-references), and the
rule is refused then, naming the pattern.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import re2

from stacklens.errors import InvalidInput
from stacklens.ingest.card_numbers import card_hint
from stacklens.ingest.scrub import is_sensitive_key

Span = tuple[int, int]
# What a type finds: (the value's text, the key it is under, lower-cased or None) → spans to replace.
Finder = Callable[[str, str | None], list[Span]]
TYPES = ("credit_card", "email", "ip", "iban", "password", "bearer", "pattern")
MAX_PATTERN = 500
_RE2_MEMORY = 8 << 20  # bytes one compiled tenant pattern may use

_CARD = re.compile(r"(?<![\w.\-])[2-6](?:[ -]?\d){12,18}(?![\w])")
_EMAIL = re.compile(
    r"[A-Za-z0-9._%+\-]{1,64}@[A-Za-z0-9\-]{1,63}(?:\.[A-Za-z0-9\-]{1,63}){0,8}\.[A-Za-z]{2,24}"
)
_IPV4 = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w.])")
_IPV6 = re.compile(r"(?<![\w:.])[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?:%\w{1,16})?(?![\w:.])")
_IBAN = re.compile(r"(?<![\w])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}(?![\w])")
_BEARER = re.compile(r"(?i)\bbearer[ \t]{1,8}[A-Za-z0-9\-._~+/]{1,8192}=*")


# What the raw JSON line of a payload must hold for a type to find anything in it: a line without it lets
# ingest skip the rule for that payload (:meth:`stacklens.scrubbing.apply.ScrubRules.apply`). Substring
# searches only (memchr speed: a regular expression over a 20 KB line costs more than it spares); JSON may
# spell
# a character as ``\uXXXX``, so a line with such an escape is never judged by these.
_HINTS: dict[str, tuple[bytes, ...]] = {"email": (b"@",), "bearer": (b"earer", b"EARER")}


def may_find(kind: str, raw: bytes) -> bool:
    """Whether the type may find anything in a payload parsed from ``raw`` (no false negatives)."""
    if kind == "credit_card":
        return card_hint(raw) or b"\\u" in raw
    needles = _HINTS.get(kind)
    return needles is None or any(n in raw for n in needles) or b"\\u" in raw


class BadPattern(InvalidInput):
    """A pattern RE2 cannot compile or run in linear time; the message says why."""


def _luhn(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = ord(char) - 48
        if index % 2:
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return total % 10 == 0


def _cards(text: str, _key: str | None) -> list[Span]:
    if len(text) < 13:
        return []
    out = []
    for found in _CARD.finditer(text):
        digits = re.sub(r"[ -]", "", found.group())
        if 13 <= len(digits) <= 19 and _luhn(digits):
            out.append(found.span())
    return out


def _emails(text: str, _key: str | None) -> list[Span]:
    if "@" not in text:
        return []
    return [found.span() for found in _EMAIL.finditer(text)]


def _ips(text: str, _key: str | None) -> list[Span]:
    out = []
    if "." in text:
        for found in _IPV4.finditer(text):
            if all(int(part) <= 255 for part in found.group().split(".")):
                out.append(found.span())
    if text.count(":") >= 2:
        for found in _IPV6.finditer(text):
            try:
                ipaddress.IPv6Address(found.group().split("%")[0])
            except ValueError:
                continue
            out.append(found.span())
    return sorted(out)


def _ibans(text: str, _key: str | None) -> list[Span]:
    if len(text) < 15:
        return []
    out = []
    for found in _IBAN.finditer(text):
        compact = found.group().replace(" ", "")
        if 15 <= len(compact) <= 34:
            moved = compact[4:] + compact[:4]
            number = "".join(str(int(c, 36)) for c in moved)
            if int(number) % 97 == 1:
                out.append(found.span())
    return out


def _passwords(text: str, key: str | None) -> list[Span]:
    """The whole value, when the key it is under names a secret (``password``, ``api_key``, ``token``, … as
    the built-in scrubbing judges key names)."""
    return [(0, len(text))] if text and key is not None and is_sensitive_key(key) else []


def _bearers(text: str, _key: str | None) -> list[Span]:
    if "earer" not in text and "EARER" not in text:
        return []
    return [found.span() for found in _BEARER.finditer(text)]


BUILT_IN: dict[str, Finder] = {
    "credit_card": _cards,
    "email": _emails,
    "ip": _ips,
    "iban": _ibans,
    "password": _passwords,
    "bearer": _bearers,
}


def finder(kind: str, pattern: str | None) -> Finder:
    """The finder of a rule's type (``pattern``: the tenant's regular expression, compiled once)."""
    if kind != "pattern":
        return BUILT_IN[kind]
    compiled = compile_pattern(pattern or "")

    def find(text: str, _key: str | None) -> list[Span]:
        spans: list[Span] = []
        for found in compiled.finditer(text):
            if compiled.groups:
                # Groups name what to replace (`cust=(\w+)` keeps `cust=`); without them, the whole match.
                spans.extend(found.span(g) for g in range(1, compiled.groups + 1) if found.start(g) >= 0)
            elif found.end() > found.start():
                spans.append(found.span())
        return sorted(s for s in spans if s[1] > s[0])

    return find


@lru_cache(maxsize=1024)
def compile_pattern(pattern: str) -> Any:
    """A tenant's pattern on RE2; :class:`BadPattern` names what RE2 refused."""
    if not pattern:
        raise BadPattern("a rule of type pattern needs a pattern")
    if len(pattern) > MAX_PATTERN:
        raise BadPattern(f"the pattern is longer than {MAX_PATTERN} characters")
    options = re2.Options()
    options.log_errors = False
    options.max_mem = _RE2_MEMORY
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        reason = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise BadPattern(f"not a pattern RE2 can run: {reason}") from None
