"""Card payments through the (simulated) payment provider."""

from __future__ import annotations

import random
import time


class PaymentDeclined(RuntimeError):
    """The provider refused the charge."""


class ProviderTimeout(TimeoutError):
    """The provider did not answer in time."""


def _call_provider(amount_cents: int, card_last4: str, rng: random.Random) -> str:
    time.sleep(rng.uniform(0.04, 0.18))
    if card_last4 == "0002":
        raise PaymentDeclined(f"card ending {card_last4} declined for {amount_cents / 100:.2f} EUR")
    if rng.random() < 0.04:
        raise ProviderTimeout(f"payment provider timed out after {rng.randint(3000, 9000)} ms")
    return f"ch_{rng.getrandbits(48):012x}"


def charge(amount_cents: int, card_number: str, rng: random.Random) -> str:
    """Charge a card; the number itself is never kept (its last four digits are)."""
    return _call_provider(amount_cents, card_number[-4:], rng)


def charge_with_retry(amount_cents: int, card_number: str, rng: random.Random, attempts: int = 2) -> str:
    for attempt in range(1, attempts + 1):
        try:
            return charge(amount_cents, card_number, rng)
        except ProviderTimeout:
            if attempt == attempts:
                raise
    raise AssertionError("unreachable")
