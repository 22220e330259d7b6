"""Card numbers in event text: which raw lines may hold one, and their replacement in a string.

A card number is a run of 13–19 digits (a space or a dash allowed between groups) that passes the Luhn check,
begins as payment cards do (2–6) and stands apart from letters; :mod:`stacklens.ingest.scrub` replaces each
with ``[FILTERED]`` in every string of an event whose raw line may hold one."""

from __future__ import annotations

import re
from functools import lru_cache

from stacklens.ingest.validate import SHAPE
from stacklens_contract.words import FILTERED

# Payment cards begin with major industry identifier 2–6 (ISO/IEC 7812: 2 Mastercard and Mir, 3 Amex, JCB and
# Diners, 4 Visa, 5 Mastercard and Maestro, 6 Discover, UnionPay and Maestro). Long numbers that begin with 1
# fill payloads — thread ids (140…) and epoch milliseconds (17…) — and one in ten passes the Luhn check:
# those stay readable.
_CARD_INDUSTRIES = frozenset("23456")
_ASCII_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_CARD = re.compile(r"(?<!\d)(?:\d[ -]?){12,18}\d(?!\d)")
# Card numbers are written unbroken, 4-4-4-4 or 4-6-5 (Amex): each holds 4 digits, 4–6 digits and 4 digits
# with at most one space or dash between the groups, so each holds 8 digits in a row or 4 + separator + 4.
# The hint looks for those two seeds with substring searches on a translated copy (digits → "0", space and
# dash → "-", any other byte → "x"): ~2 µs per 14 KB line, where a regular expression takes ~250 µs.
_HINT_TABLE = SHAPE
_HINT_SEEDS = (b"00000000", b"0000-0000")


def _luhn(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = ord(char) - 48
        if index % 2 == 1:
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return total % 10 == 0


def card_hint(data: bytes) -> bool:
    """Whether ``data`` may hold a card number (see :data:`_HINT_SEEDS`): cheap, no false negatives for the
    shapes cards are written in."""
    shaped = data.translate(_HINT_TABLE)
    return _HINT_SEEDS[0] in shaped or _HINT_SEEDS[1] in shaped


def holds_card(raw: bytes, shaped: bytes = b"") -> bool:
    """Whether the raw JSON text holds a Luhn-valid card number.

    Long digit runs are common in payloads (thread ids, epoch times) but 9 in 10 fail the Luhn check, so
    most lines holding them still need no per-string search. Each seed found is widened to its whole
    stretch of digits, spaces and dashes, and only that window meets the full pattern.
    """
    if len(shaped) != len(raw):
        shaped = raw.translate(_HINT_TABLE)
    checked: set[bytes] = set()
    for seed in _HINT_SEEDS:
        start = shaped.find(seed)
        while start != -1:
            # The shape holds only "0", "-" and "x": the run around the seed ends at the nearest "x".
            left = shaped.rfind(b"x", 0, start) + 1
            right = shaped.find(b"x", start)
            if right == -1:
                right = len(shaped)
            if _run_holds_card(raw, left, right, checked):
                return True
            # A "\uXXXX" escape just before the run lends it its last hex digits ("\u00e94111…" is "é4111…"):
            # the run without them is looked at as well.
            escape = raw.rfind(b"\\u", max(0, left - 5), left)
            if (
                escape != -1
                and left < escape + 6 < right
                and _run_holds_card(raw, escape + 6, right, checked)
            ):
                return True
            start = shaped.find(seed, right)
    return False


def _run_holds_card(raw: bytes, left: int, right: int, checked: set[bytes]) -> bool:
    """Whether ``raw[left:right]``, a run of digits, spaces and dashes, holds a card (each run is looked at
    once)."""
    window = raw[left:right]
    # A card has 13 digits at least: shorter runs (epoch seconds, ids) need no closer look.
    if right - left < 13 or window in checked:
        return False
    checked.add(window)
    return _window_holds_card(window)


@lru_cache(maxsize=4096)
def _window_holds_card(window: bytes) -> bool:
    """Whether a run of digits, spaces and dashes holds a card number; cached, as the same runs (thread ids,
    process ids) come back in line after line."""
    text = window.decode("ascii")
    return replace_cards(text) != text


def replace_cards(text: str) -> str:
    """``text`` with every card number in it (13–19 digits, spaces or dashes allowed, Luhn-valid, standing
    apart from letters) replaced by ``[FILTERED]``."""
    return _CARD.sub(_card_or_digits, text)


def _card_or_digits(match: re.Match[str]) -> str:
    text, start, end = match.string, match.start(), match.end()
    # A run of digits inside a word is part of an identifier, not a card: a trace id such as
    # 2c444985531344618dbd… holds a Luhn-valid 15-digit run (about one random trace id in 1,000 holds one),
    # and filtering it cut the transaction off from its trace and its log records. A card stands apart from
    # letters, as the word boundaries of Sentry's scrubber say too (its neighbours are never digits: _CARD).
    # Here rather than in _CARD's lookarounds: the spans stay those the raw line's windows see, so
    # holds_card still finds every card this replaces.
    if (start > 0 and text[start - 1] in _ASCII_LETTERS) or (end < len(text) and text[end] in _ASCII_LETTERS):
        return match.group(0)
    digits = re.sub(r"\D", "", match.group(0))
    is_card = 13 <= len(digits) <= 19 and digits[0] in _CARD_INDUSTRIES and _luhn(digits)
    return FILTERED if is_card else match.group(0)
