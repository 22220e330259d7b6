"""Order e-mails, sent by the shop's background worker (its own service and app key)."""

from __future__ import annotations

import random
import time


class SmtpUnavailable(ConnectionError):
    """The mail relay refused the connection."""


def render_receipt(order_id: str, email: str, total_cents: int) -> str:
    return f"To: {email}\nSubject: Your order {order_id}\n\nTotal: {total_cents / 100:.2f} EUR\n"


def send(order_id: str, email: str, total_cents: int, rng: random.Random) -> None:
    message = render_receipt(order_id, email, total_cents)
    time.sleep(rng.uniform(0.005, 0.03))
    if rng.random() < 0.15:
        raise SmtpUnavailable(f"relay smtp-{rng.randint(1, 4)}.internal:587 refused connection")
    if "@" not in email:
        raise ValueError(f"cannot send receipt for {order_id}: bad address {email!r}")
    del message
