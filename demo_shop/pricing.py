"""Cart totals, coupons and taxes."""

from __future__ import annotations

COUPONS = {"WELCOME10": 10, "SPRING25": 25, "STAFF": 40, "BROKEN": 0}
TAX_RATES = {"DE": 0.19, "FR": 0.20, "NL": 0.21, "US": 0.0}


def discount_factor(coupon: str | None) -> float:
    if not coupon:
        return 1.0
    percent = COUPONS.get(coupon.upper())
    if percent is None:
        raise ValueError(f"unknown coupon {coupon!r}")
    # A zero-percent coupon is a data-entry bug in the coupon table; the step size divides by it.
    step = 100 / percent
    return 1.0 - (100 / step) / 100


def total_cents(lines: list[tuple[int, int]], coupon: str | None, country: str) -> int:
    subtotal = sum(price * qty for price, qty in lines)
    rate = TAX_RATES[country]
    return round(subtotal * discount_factor(coupon) * (1 + rate))
