"""Card numbers: the one search over a raw line never misses a card that the per-string replacement finds,
and identifiers that hold Luhn-valid digit runs are left whole."""

from __future__ import annotations

import json
import random

from stacklens.ingest.card_numbers import card_hint, holds_card, replace_cards
from stacklens_contract.words import FILTERED

CARDS = (
    "4111111111111111",
    "4111 1111 1111 1111",
    "5555-5555-5555-4444",
    "378282246310005",
    "6011111111111117",
)


def _text(rng: random.Random) -> str:
    """A string of the pieces cards hide among: digit runs, cards, separators, letters, identifiers."""
    pieces = [
        lambda: rng.choice(CARDS),
        lambda: "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 20))),
        lambda: rng.choice([" ", "-", "_", ":", "(", ")", "\n", "é"]),
        lambda: "".join(rng.choice("abcdefxyzABC") for _ in range(rng.randint(1, 4))),
        lambda: f"{rng.getrandbits(128):032x}",
    ]
    return "".join(rng.choice(pieces)() for _ in range(rng.randint(1, 8)))


def test_the_raw_line_search_finds_every_card_the_replacement_finds() -> None:
    rng = random.Random(45)
    replaced = 0
    for _ in range(5_000):
        text = _text(rng)
        if replace_cards(text) != text:
            replaced += 1
            raw = json.dumps({"extra": {"note": text}}).encode()
            assert holds_card(raw), text
            assert card_hint(text.encode()), text
    assert replaced > 300  # the corpus holds cards (588 of 5,000 here): the property was put to the test


def test_a_card_apart_from_letters_is_replaced_an_identifier_is_not() -> None:
    assert replace_cards("paid 4111 1111 1111 1111 today") == f"paid {FILTERED} today"
    assert replace_cards("order_4111111111111111") == f"order_{FILTERED}"
    for identifier in ("2c444985531344618dbd138c77d536ce", "a4111111111111111", "4111111111111111ff"):
        assert replace_cards(identifier) == identifier


def test_a_card_after_an_escaped_character_is_found_in_the_raw_line() -> None:
    text = "é4111111111111111"
    raw = json.dumps({"note": text}).encode()  # "\u00e94111…": the escape's last digit touches the card
    assert b"\\u00e94111" in raw
    assert replace_cards(text) == f"é{FILTERED}" and holds_card(raw)
