"""Shipping quotes by postcode."""

from __future__ import annotations

import re

POSTCODE = {
    "DE": re.compile(r"^\d{5}$"),
    "FR": re.compile(r"^\d{5}$"),
    "NL": re.compile(r"^\d{4} ?[A-Z]{2}$"),
    "US": re.compile(r"^\d{5}(-\d{4})?$"),
}


def parse_postcode(country: str, postcode: str) -> str:
    pattern = POSTCODE.get(country)
    if pattern is None:
        raise ValueError(f"we do not ship to {country}")
    if not pattern.match(postcode.strip().upper()):
        raise ValueError(f"invalid postcode {postcode!r} for {country}")
    return postcode.strip().upper()


def quote_cents(country: str, postcode: str, weight_grams: int) -> int:
    parse_postcode(country, postcode)
    base = {"DE": 490, "FR": 690, "NL": 590, "US": 1990}[country]
    return base + (weight_grams // 500) * 150
