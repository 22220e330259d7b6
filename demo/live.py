"""The demo's live traffic: carries on from now with the daily shape and rate of the history
(:mod:`demo.rates`), saying each hour what was sent and what was lost."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from demo.arrivals import live_arrivals
from demo.delivery import (
    JS_ERRORS,
    MAIL_ERRORS,
    MAILS,
    PAGE_LOADS,
    VISITS,
    Tally,
    describe,
)
from demo.traffic import CURRENT_RELEASE, Site, page_load, send_order_mail, shop_visit


def run_live(
    shop: httpx.Client,
    rng: random.Random,
    site: Site,
    capture: Callable[[BaseException], Any],
    stop: Callable[[], bool],
    say: Callable[[str], None] = print,
    scale: float = 1.0,
) -> Tally:
    """Live traffic until ``stop()``: :func:`live_arrivals` as they fall due, mails after orders. Says once an
    hour what landed, and when the shop does not answer."""
    tally = Tally()
    hour = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    for arrival in live_arrivals(rng, datetime.now(UTC), scale):
        while (now := datetime.now(UTC)) < arrival.at:
            if stop():
                return tally
            time.sleep(min(1.0, (arrival.at - now).total_seconds()))
        if stop():
            return tally
        if now - hour >= timedelta(hours=1):
            _say_hour(say, tally, hour)
            hour = now.replace(minute=0, second=0, microsecond=0)
        try:
            if arrival.kind == VISITS:
                order = shop_visit(shop, rng)
                tally.add(now.date(), VISITS)
                if order is not None:
                    mailed = send_order_mail(rng, order.total_cents, capture, trace=order.trace)
                    tally.add(now.date(), MAILS if mailed else MAIL_ERRORS)
            else:
                order = page_load(shop, rng, site, CURRENT_RELEASE, now, tally, now.date())
                # The checkout page placed an order: its mail continues the page's trace.
                if order is not None:
                    mailed = send_order_mail(rng, order.total_cents, capture, trace=order.trace)
                    tally.add(now.date(), MAILS if mailed else MAIL_ERRORS)
        except httpx.HTTPError as exc:
            # Every retry failed: the shop is down or stalled (its own log says why).
            say(f"live: the shop did not answer ({describe(exc)}); this {arrival.kind[:-1]} is lost")
    return tally


def _say_hour(say: Callable[[str], None], tally: Tally, hour: datetime) -> None:
    totals = tally.totals()
    say(
        f"live {hour:%Y-%m-%d %H}:00-{hour + timedelta(hours=1):%H}:00 UTC: {totals[VISITS]} visits, "
        f"{totals[PAGE_LOADS]} page loads, {totals[JS_ERRORS]} JavaScript errors, "
        f"{totals[MAILS] + totals[MAIL_ERRORS]} order mails"
    )
    tally.landed.clear()
