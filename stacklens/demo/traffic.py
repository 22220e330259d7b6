"""Demo traffic: customers using the shop, browsers loading its pages, and the order-mail worker.

Three kinds of traffic reach StackLens through the real path (SDK → log files → shipper → ingest):
- HTTP requests to the shop (its SDK records errors and ``http.server`` transactions);
- browser page loads and JavaScript errors, posted as `@sentry/browser` envelopes to the shop's tunnel;
- the worker, this process, sending order mails under its own per-service app key.

``backfill`` replays the same traffic for past weeks, release by release, once per data directory.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from demo_shop import mailer
from stacklens.demo import browser
from stacklens.demo import replays as replay_demo
from stacklens.demo.clock import CLOCK_HEADER, encode_clock

RELEASES = (
    browser.ReleaseShape("shop@1.0.0", 410_000, True, 1.0),
    browser.ReleaseShape("shop@1.1.0", 430_000, True, 1.0),
    browser.ReleaseShape("shop@1.2.0", 455_000, False, 0.95),
    browser.ReleaseShape("shop@1.3.0", 780_000, True, 1.35),  # the release that shipped a heavy bundle
    browser.ReleaseShape("shop@1.4.0", 520_000, False, 1.05),
)
CURRENT_RELEASE = RELEASES[-1]


@dataclass(frozen=True)
class Customer:
    id: str
    email: str
    tier: str


CUSTOMERS = tuple(
    Customer(str(1000 + i), f"customer{i}@example.com", ("free", "plus", "pro")[i % 3]) for i in range(40)
)
SEARCHES = ("prime lens", "zoom", "camera body", "filter kit", "tripod", "macro")


def _headers(rng: random.Random, customer: Customer | None) -> dict[str, str]:
    headers = {
        "x-region": rng.choice(["eu-central", "eu-west", "us-east"]),
        "authorization": "Bearer demo-session-token",
    }
    if customer:
        headers.update(
            {"x-user-id": customer.id, "x-user-email": customer.email, "x-customer-tier": customer.tier}
        )
    return headers


def _checkout_body(rng: random.Random, customer: Customer | None) -> dict[str, Any]:
    country = rng.choice(["DE", "DE", "FR", "NL", "US"])
    good = {"DE": "10115", "FR": "75001", "NL": "1012 AB", "US": "94107"}[country]
    return {
        "items": [
            {"product_id": rng.randint(1, 8), "quantity": rng.randint(1, 2)} for _ in range(rng.randint(1, 3))
        ],
        "coupon": rng.choice(
            [None, None, "WELCOME10", "SPRING25", "BROKEN" if rng.random() < 0.25 else None]
        ),
        "country": country,
        "postcode": good if rng.random() > 0.12 else rng.choice(["ABC", "1234567", "99 999"]),
        "card_number": "4000000000000002" if rng.random() < 0.1 else "4242424242424242",
        "email": customer.email if customer else "guest@example.com",
        "password": "hunter2-correct-horse" if rng.random() < 0.3 else None,
    }


def shop_visit(
    client: httpx.Client, rng: random.Random, extra_headers: dict[str, str] | None = None
) -> int | None:
    """One customer action against the shop. Returns the order total when an order was placed."""
    customer = rng.choice(CUSTOMERS) if rng.random() > 0.3 else None
    headers = {**_headers(rng, customer), **(extra_headers or {})}
    roll = rng.random()
    if roll < 0.25:
        client.get("/api/products", headers=headers)
        client.get(f"/api/products/{rng.randint(1, 10)}", headers=headers)
    elif roll < 0.40:
        query = rng.choice(SEARCHES)
        client.get("/api/search", params={"q": query}, headers=headers)
    elif roll < 0.55:
        client.post(
            "/api/cart",
            json={"product_id": rng.randint(1, 8), "quantity": rng.choice([1, 1, 2, 4, 6])},
            headers=headers,
        )
    elif roll < 0.70:
        client.get(f"/api/recommendations/{customer.id if customer else 0}", headers=headers)
    else:
        path = "/api/express-checkout" if rng.random() < 0.3 else "/api/checkout"
        response = client.post(path, json=_checkout_body(rng, customer), headers=headers)
        if response.status_code == 200:
            return int(response.json()["total_cents"])
    return None


def browser_loads(
    client: httpx.Client,
    rng: random.Random,
    dsn: str,
    origin: str,
    release: browser.ReleaseShape,
    environment: str,
    when: datetime,
    count: int,
) -> None:
    """Post ``count`` page loads (and now and then a JavaScript error) to the shop's tunnel."""
    items = []
    replays: list[bytes] = []
    for _ in range(count):
        customer = rng.choice(CUSTOMERS) if rng.random() > 0.4 else None
        at = when - timedelta(seconds=rng.uniform(0, 30))
        items.append(
            browser.pageload(
                rng,
                origin,
                release,
                environment,
                at,
                customer.id if customer else None,
                fail_api=rng.random() < 0.05,
            )
        )
        if rng.random() < 0.12:
            # About one visitor in 40 has a device whose clock runs a week ahead: the service stores such an
            # error under its receive time and the event page says so (no extra draw, so the rest of the
            # demo's traffic stays what the seed makes it).
            sent = at + timedelta(days=7) if int(at.timestamp()) % 40 == 0 else at
            error = browser.js_error(
                rng, origin, release, environment, sent, customer.id if customer else None
            )
            items.append(error)
            if sent == at and int(error["event_id"][:2], 16) % 2 == 0:  # half the errors come with a replay
                replays.extend(_recorded(dsn, origin, release, environment, error))
    for item in items:
        client.post(
            "/tunnel",
            content=browser.envelope(dsn, [item]),
            headers={"content-type": "text/plain;charset=UTF-8"},
        )
    for body in replays:
        client.post("/tunnel", content=body, headers={"content-type": "text/plain;charset=UTF-8"})


def _recorded(
    dsn: str, origin: str, release: browser.ReleaseShape, environment: str, error: dict
) -> list[bytes]:
    """The replay of the session that led to ``error`` (tagged with its id, as the SDK tags it); its own
    random source, seeded by the error, so the rest of the seeded traffic is unchanged."""
    rng = random.Random(error["event_id"])
    replay_id = replay_demo.new_replay_id(error["event_id"])
    error["tags"]["replayId"] = replay_id
    seconds = rng.randint(20, 40)
    error_ms = int(error["timestamp"] * 1000)
    events = replay_demo.session_events(rng, origin, error_ms - seconds * 1000, seconds + 3)
    return replay_demo.replay_envelopes(
        dsn,
        replay_id,
        events,
        origin=origin,
        release=release.name,
        environment=environment,
        user_agent=error["request"]["headers"]["User-Agent"],
        user_id=(error.get("user") or {}).get("id"),
        error_ids=[error["event_id"]],
    )


def send_order_mail(rng: random.Random, total_cents: int, capture: Callable[[BaseException], Any]) -> None:
    customer = rng.choice(CUSTOMERS)
    email = customer.email if rng.random() > 0.05 else customer.email.replace("@", " at ")
    try:
        mailer.send(f"ord_{rng.getrandbits(32):08x}", email, total_cents, rng)
    except (mailer.SmtpUnavailable, ValueError) as exc:
        capture(exc)


def release_at(day_offset: int, days: int) -> browser.ReleaseShape:
    """The release live ``day_offset`` days ago, spreading the releases evenly over ``days``."""
    index = min(len(RELEASES) - 1, int((days - day_offset) / days * len(RELEASES)))
    return RELEASES[max(0, index)]


def backfill(
    shop: httpx.Client,
    rng: random.Random,
    dsn: str,
    origin: str,
    environment: str,
    days: int,
    visits_per_day: int,
    loads_per_day: int,
    now: datetime | None = None,
    workers: int = 8,
) -> int:
    """Replay ``days`` of history through the shop (honouring the demo clock) and its tunnel.

    Days run side by side on ``workers`` threads (the shop's simulated latencies are sleeps, so this is
    what keeps a 35-day backfill under a minute). Returns the number of requests made.
    """
    now = now or datetime.now(UTC)
    seeds = [rng.getrandbits(32) for _ in range(days)]

    def one_day(offset: int) -> int:
        day_rng = random.Random(seeds[offset - 1])
        release = release_at(offset, days)
        day = now - timedelta(days=offset)
        made = 0
        for _ in range(visits_per_day):
            at = day + timedelta(seconds=day_rng.uniform(0, 86_000))
            try:
                shop_visit(shop, day_rng, {CLOCK_HEADER: encode_clock(at, release.name)})
                made += 1
            except httpx.HTTPError:
                continue  # a dropped connection loses one visit of history, not the backfill
        try:
            browser_loads(
                shop, day_rng, dsn, origin, release, environment, day + timedelta(hours=12), loads_per_day
            )
            made += loads_per_day
        except httpx.HTTPError:
            pass
        return made

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return sum(pool.map(one_day, range(days, 0, -1)))


def run_live(
    shop: httpx.Client,
    rng: random.Random,
    dsn: str,
    origin: str,
    environment: str,
    capture: Callable[[BaseException], Any],
    stop: Callable[[], bool],
    pause: float = 0.25,
) -> None:
    """Live traffic until ``stop()``: a visit per tick, page loads every few ticks, mails after orders."""
    tick = 0
    while not stop():
        try:
            total = shop_visit(shop, rng)
            if total is not None:
                send_order_mail(rng, total, capture)
            if tick % 4 == 0:
                browser_loads(
                    shop, rng, dsn, origin, CURRENT_RELEASE, environment, datetime.now(UTC), rng.randint(1, 3)
                )
        except httpx.HTTPError:
            time.sleep(1.0)  # the shop is restarting; the supervisor says so in its own log
        tick += 1
        time.sleep(pause)
