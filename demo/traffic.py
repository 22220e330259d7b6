"""Demo traffic: customers using the shop, browsers loading its pages, and the order-mail worker.

Three kinds of traffic reach StackLens through the real path (SDK → log files → shipper → ingest):
- HTTP requests to the shop (its SDK records errors and ``http.server`` transactions);
- browser page loads and JavaScript errors, posted as `@sentry/browser` envelopes to the shop's tunnel;
- the worker, this process, sending order mails under its own per-service app key.

Every shop request is its own trace (the shop's SDK starts one per request: this process sends no trace
headers) and so is every worker job (:func:`worker_job`), so "Logs of this trace" lists one request's or one
job's records.

``backfill`` replays the same traffic for past weeks, release by release, once per data directory; ``run_live``
carries on from now. Both follow one daily shape and rate (:mod:`demo.rates`), so today looks like
any day of the history. Requests the shop did not take are sent again and every loss is counted and said
(:mod:`demo.delivery`).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

import httpx
import sentry_sdk
from sentry_sdk import logger as log

from demo import browser, rates
from demo import replays as replay_demo
from demo.backfill_report import BackfillReport
from demo.clock import CLOCK_HEADER, REQUEST_CLOCK, encode_clock
from demo.delivery import (
    BROWSER_SESSIONS,
    ERROR_ANSWERS,
    JS_ERRORS,
    MAIL_ERRORS,
    MAILS,
    PAGE_LOADS,
    REPLAYS,
    REQUESTS,
    SERVER_SESSIONS,
    VISITS,
    Tally,
    describe,
)
from demo_shop import mailer

RELEASES = (
    browser.ReleaseShape("shop@1.0.0", 410_000, True, 1.0),
    browser.ReleaseShape("shop@1.1.0", 430_000, True, 1.0),
    browser.ReleaseShape("shop@1.2.0", 455_000, False, 0.95),
    # The release that shipped a heavy bundle, and a bug that makes most of its JavaScript errors unhandled:
    # its crash-free session rate is the one that drops (the others share one crash share, 0.15).
    browser.ReleaseShape("shop@1.3.0", 780_000, True, 1.35, crashed_share=0.9),
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
    client: httpx.Client,
    rng: random.Random,
    extra_headers: dict[str, str] | None = None,
    answered: Callable[[httpx.Response], object] | None = None,
) -> int | None:
    """One customer action against the shop (one or two requests, each shown to ``answered``). Returns the
    order total when an order was placed."""
    customer = rng.choice(CUSTOMERS) if rng.random() > 0.3 else None
    headers = {**_headers(rng, customer), **(extra_headers or {})}
    seen = answered or (lambda _response: None)
    roll = rng.random()
    if roll < 0.25:
        seen(client.get("/api/products", headers=headers))
        seen(client.get(f"/api/products/{rng.randint(1, 10)}", headers=headers))
    elif roll < 0.40:
        query = rng.choice(SEARCHES)
        seen(client.get("/api/search", params={"q": query}, headers=headers))
    elif roll < 0.55:
        seen(
            client.post(
                "/api/cart",
                json={"product_id": rng.randint(1, 8), "quantity": rng.choice([1, 1, 2, 4, 6])},
                headers=headers,
            )
        )
    elif roll < 0.70:
        seen(client.get(f"/api/recommendations/{customer.id if customer else 0}", headers=headers))
    else:
        path = "/api/express-checkout" if rng.random() < 0.3 else "/api/checkout"
        response = client.post(path, json=_checkout_body(rng, customer), headers=headers)
        seen(response)
        if response.status_code == 200:
            return int(response.json()["total_cents"])
    return None


@dataclass(frozen=True)
class Site:
    """Where the demo's browsers post: the shop's tunnel, with the project's browser DSN, as pages of
    ``origin`` in ``environment``."""

    dsn: str
    origin: str
    environment: str


def _tunnel(
    client: httpx.Client,
    body: bytes,
    clock: dict[str, str],
    tally: Tally | None = None,
    day: date | None = None,
) -> str:
    """Post one envelope to the shop's tunnel; "" when it was accepted, else why not. ``clock`` is the demo
    clock header of a history post: the shop's own record of the request (an ``http.server`` transaction of
    ``/tunnel``, and its request session) then stands at the page load's moment too, not in one spike at the
    backfill's minute. Every answered post is one request session of the shop's SDK (counted in ``tally``)."""
    headers = {"content-type": "text/plain;charset=UTF-8", **clock}
    response = client.post("/tunnel", content=body, headers=headers)
    if tally is not None and day is not None:
        tally.add(day, SERVER_SESSIONS)
    return "" if response.status_code == 200 else f"the tunnel answered {response.status_code}"


def page_load(
    client: httpx.Client,
    rng: random.Random,
    site: Site,
    release: browser.ReleaseShape,
    at: datetime,
    tally: Tally,
    day: date,
    history: bool = False,
) -> None:
    """One browser page load at ``at`` through the shop's tunnel, with the session `@sentry/browser` starts
    for it; now and then a JavaScript error (with the session's update: errored, or crashed when unhandled),
    half of those with the replay of the session that led to it. Session updates travel in the envelope of
    the page load or error they belong to (one post each, not two). What the tunnel accepted goes to
    ``tally``, what it refused too; a request it never answered (after :mod:`demo.delivery`'s
    retries) raises. ``history``: a moment of the backfill (the shop is told, see :func:`_tunnel`)."""
    clock = {CLOCK_HEADER: encode_clock(at, release.name)} if history else {}
    customer = rng.choice(CUSTOMERS) if rng.random() > 0.4 else None
    user = customer.id if customer else None
    load = browser.pageload(
        rng, site.origin, release, site.environment, at, user, fail_api=rng.random() < 0.05
    )
    session = browser.page_session(load, release, site.environment, at, user)
    refused = _tunnel(client, browser.envelope(site.dsn, [load], [session]), clock, tally, day)
    tally.record(day, PAGE_LOADS, refused)
    tally.record(day, BROWSER_SESSIONS, refused)
    if rng.random() >= 0.12:
        return
    # About one visitor in 40 has a device whose clock runs a week ahead: the service stores such an error under
    # its receive time and the event page says so. (Only where a week ahead is still in the future: an older
    # history day's "week ahead" would be an ordinary past time on the wrong day.)
    skewed = at + timedelta(days=7)
    sent = skewed if int(at.timestamp()) % 40 == 0 and skewed > datetime.now(UTC) else at
    error = browser.js_error(rng, site.origin, release, site.environment, sent, user)
    update = browser.session_after_error(session, error, release)
    replay: list[bytes] = []
    if sent == at and int(error["event_id"][:2], 16) % 2 == 0:  # half the errors come with a replay
        replay = _recorded(site.dsn, site.origin, release, site.environment, error)
    refused = _tunnel(client, browser.envelope(site.dsn, [error], [update]), clock, tally, day)
    tally.record(day, JS_ERRORS, refused)
    if replay:
        refused = next(
            (why for why in (_tunnel(client, body, clock, tally, day) for body in replay) if why), ""
        )
        tally.record(day, REPLAYS, refused)


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


@contextmanager
def worker_job(clock: str | None = None) -> Iterator[None]:
    """One job of the worker as its own trace: a fresh trace id on a scope of its own (the worker's events and
    log records of this job share it, no other job does). ``clock``: a history job's moment, for its log
    records (:func:`demo.clock.apply_demo_clock_to_log`)."""
    token = REQUEST_CLOCK.set(clock or "")
    try:
        with sentry_sdk.isolation_scope(), sentry_sdk.new_scope():
            sentry_sdk.continue_trace({})  # no incoming trace: a new one
            yield
    finally:
        REQUEST_CLOCK.reset(token)


def send_order_mail(
    rng: random.Random,
    total_cents: int,
    capture: Callable[[BaseException], Any],
    clock: str | None = None,
) -> bool:
    """The worker's receipt for an order, as one job (its own trace, its log records); whether it went out
    (a failure is captured by the worker's SDK)."""
    customer = rng.choice(CUSTOMERS)
    email = customer.email if rng.random() > 0.05 else customer.email.replace("@", " at ")
    order = f"ord_{rng.getrandbits(32):08x}"
    with worker_job(clock):
        try:
            mailer.send(order, email, total_cents, rng)
        except (mailer.SmtpUnavailable, ValueError) as exc:
            log.error("mail: receipt {order} not sent: {error}", order=order, error=str(exc))
            capture(exc)
            return False
        log.info("mail: receipt {order} sent", order=order, attributes={"order.total_cents": total_cents})
    return True


def release_at(day_offset: int, days: int) -> browser.ReleaseShape:
    """The release live ``day_offset`` days ago (0: today), spreading the releases evenly over ``days``."""
    index = min(len(RELEASES) - 1, int((days - day_offset) / days * len(RELEASES)))
    return RELEASES[max(0, index)]


@dataclass(frozen=True)
class Arrival:
    at: datetime
    kind: str  # VISITS or PAGE_LOADS


def arrivals(rng: random.Random, start: datetime, end: datetime, scale: float = 1.0) -> list[Arrival]:
    """The visits and page loads from ``start`` to ``end``, hour by hour as :mod:`demo.rates`
    says, each at a random moment of its hour, in time order."""
    out: list[Arrival] = []
    at = start
    while at < end:
        step = min(end, at.replace(minute=0, second=0, microsecond=0) + timedelta(hours=1))
        expected = rates.expected_between(at, step, scale)
        seconds = (step - at).total_seconds()
        for kind, mean in ((VISITS, expected.visits), (PAGE_LOADS, expected.page_loads)):
            out.extend(
                Arrival(at + timedelta(seconds=rng.uniform(0, seconds)), kind)
                for _ in range(rates.draw_count(rng, mean))
            )
        at = step
    return sorted(out, key=lambda a: a.at)


# A day's slice gives up after this many arrivals in a row the shop never answered (each after every retry):
# the shop is gone, and trying the rest of the slice would only add 7.5 s of retries per arrival.
GIVE_UP_AFTER = 3
SLICE_HOURS = 6  # the backfill's unit of work: days are cut in four so 24 threads share them evenly


def _replay_slice(
    shop: httpx.Client,
    rng: random.Random,
    site: Site,
    release: browser.ReleaseShape,
    plan: list[Arrival],
    day: date,
    tally: Tally,
    capture_at: Callable[[datetime, str], Callable[[BaseException], Any]] | None,
) -> None:
    failed_in_a_row = 0
    for index, arrival in enumerate(plan):
        if failed_in_a_row >= GIVE_UP_AFTER:
            for rest in plan[index:]:
                tally.lose(day, rest.kind, "the shop stopped answering")
            return
        try:
            if arrival.kind == VISITS:
                _history_visit(shop, rng, release, arrival.at, day, tally, capture_at)
            else:
                page_load(shop, rng, site, release, arrival.at, tally, day, history=True)
            failed_in_a_row = 0
        except httpx.HTTPError as exc:
            failed_in_a_row += 1
            tally.lose(day, arrival.kind, describe(exc))


def _history_visit(
    shop: httpx.Client,
    rng: random.Random,
    release: browser.ReleaseShape,
    at: datetime,
    day: date,
    tally: Tally,
    capture_at: Callable[[datetime, str], Callable[[BaseException], Any]] | None,
) -> None:
    def answered(response: httpx.Response) -> None:
        tally.add(day, REQUESTS)
        tally.add(day, SERVER_SESSIONS)  # the shop's SDK makes every request a session (request mode)
        if response.status_code >= 400:
            tally.add(day, ERROR_ANSWERS)

    total = shop_visit(shop, rng, {CLOCK_HEADER: encode_clock(at, release.name)}, answered)
    tally.add(day, VISITS)
    if total is not None and capture_at is not None:
        mailed_at = at + timedelta(seconds=2)
        mailed = send_order_mail(
            rng, total, capture_at(mailed_at, release.name), encode_clock(mailed_at, release.name)
        )
        tally.add(day, MAILS if mailed else MAIL_ERRORS)


def backfill(
    shop: httpx.Client,
    rng: random.Random,
    site: Site,
    days: int,
    now: datetime | None = None,
    scale: float = 1.0,
    capture_at: Callable[[datetime, str], Callable[[BaseException], Any]] | None = None,
    workers: int = 24,
) -> BackfillReport:
    """Replay the ``days`` whole UTC days before today and today up to ``now`` through the shop (honouring
    the demo clock) and its tunnel, at the rate live traffic has (:mod:`demo.rates`).

    ``capture_at(at, release)`` gives the order-mail worker's capture for a moment of the history (the driver's
    SDK shifts the event there); without it no mails are sent. Slices of six hours run side by side on
    ``workers`` threads (the shop's latencies are sleeps: this keeps 35 days to a minute or two).
    Nothing is dropped without a word: the report counts what landed and what was lost, per kind and day.
    """
    now = now or datetime.now(UTC)
    today = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    started = time.monotonic()
    tally = Tally()
    slices: list[tuple[int, datetime, datetime, int]] = []
    for offset in range(days, -1, -1):
        day_start = today - timedelta(days=offset)
        for block in range(0, 24, SLICE_HOURS):
            start = day_start + timedelta(hours=block)
            end = min(now, start + timedelta(hours=SLICE_HOURS))
            if start < end:
                slices.append((offset, start, end, rng.getrandbits(32)))

    def one_slice(item: tuple[int, datetime, datetime, int]) -> None:
        offset, start, end, seed = item
        slice_rng = random.Random(seed)
        plan = arrivals(slice_rng, start, end, scale)
        release = release_at(offset, days) if offset else CURRENT_RELEASE
        _replay_slice(shop, slice_rng, site, release, plan, start.date(), tally, capture_at)

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="backfill") as pool:
        list(pool.map(one_slice, slices))
    return BackfillReport.of(
        tally,
        [(today - timedelta(days=offset)).date() for offset in range(days, 0, -1)],
        today.date(),
        (release_at(days, days).name, CURRENT_RELEASE.name),
        time.monotonic() - started,
    )


def live_arrivals(rng: random.Random, start: datetime, scale: float = 1.0) -> Iterator[Arrival]:
    """Live visits and page loads from ``start`` on, in time order: two Poisson processes whose rate at each
    moment is :func:`demo.rates.expected_per_hour`, the function the history is drawn from."""
    first = rates.expected_per_hour(start, scale)
    upcoming = {
        VISITS: rates.next_arrival(rng, start, first.visits),
        PAGE_LOADS: rates.next_arrival(rng, start, first.page_loads),
    }
    while True:
        kind = min(upcoming, key=lambda k: upcoming[k])
        at = upcoming[kind]
        rate = rates.expected_per_hour(at, scale)
        upcoming[kind] = rates.next_arrival(rng, at, rate.visits if kind == VISITS else rate.page_loads)
        yield Arrival(at, kind)


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
                total = shop_visit(shop, rng)
                tally.add(now.date(), VISITS)
                if total is not None:
                    tally.add(now.date(), MAILS if send_order_mail(rng, total, capture) else MAIL_ERRORS)
            else:
                page_load(shop, rng, site, CURRENT_RELEASE, now, tally, now.date())
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
