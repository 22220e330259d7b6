"""Demo traffic: customers using the shop, browsers loading its pages, and the order-mail worker.

Three kinds of traffic reach StackLens through the real path (SDK → log files → shipper → ingest):
- HTTP requests to the shop (its SDK records errors and ``http.server`` transactions);
- browser page loads and JavaScript errors, posted as `@sentry/browser` envelopes to the shop's tunnel;
- the worker, this process, sending order mails under its own per-service app key.

Every shop request is its own trace (the shop's SDK starts one per request: this process sends no trace
headers). An order's mail job continues the trace of the checkout that placed it — the shop hands the job
its trace headers from a queue.publish span, as a queue message would carry them — so the trace page shows
the request and the worker's job as one tree (:func:`worker_job`, docs/traces.md); "Logs of this trace"
lists that request's and job's records.

``backfill`` (:mod:`demo.backfill`) replays the same traffic for past weeks, release by release, once per data
directory; ``run_live`` (:mod:`demo.live`) carries on from now, arrivals drawn by :mod:`demo.arrivals`.
Both follow one daily shape and rate (:mod:`demo.rates`), so today looks like any day of the history.
Requests the shop did not take are sent again and every loss is counted and said (:mod:`demo.delivery`)."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

import httpx
import sentry_sdk
from sentry_sdk import logger as log

from demo import browser, browser_errors, browser_interactions, browser_pageloads, feedback
from demo import replays as replay_demo
from demo.clock import CLOCK_HEADER, REQUEST_CLOCK, encode_clock
from demo.clock import CONTEXT as CLOCK_CONTEXT
from demo.delivery import (
    BROWSER_SESSIONS,
    ERROR_ANSWERS,
    JS_ERRORS,
    PAGE_LOADS,
    REPLAYS,
    REQUESTS,
    SERVER_SESSIONS,
    Tally,
)
from demo_shop import mailer

RELEASES = (
    # Each release until shop@1.3.0 trims the bundle a little (code splitting): JavaScript per page view only
    # steps up once in the history, so the demo's anomaly rule fires once (a 3-4 % step up on a metric that is
    # flat within a release is beyond its band, and would fire too).
    browser.ReleaseShape("shop@1.0.0", 455_000, True, 1.0),
    browser.ReleaseShape("shop@1.1.0", 440_000, True, 1.0),
    browser.ReleaseShape("shop@1.2.0", 420_000, False, 0.95),
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


@dataclass(frozen=True)
class Order:
    """An order the shop placed: its total and the trace headers of its mail job."""

    total_cents: int
    trace: dict[str, str]
    # When the shop answered the checkout (a history order's moment; its mail job follows it).
    placed_at: datetime | None = None


def shop_visit(
    client: httpx.Client,
    rng: random.Random,
    extra_headers: dict[str, str] | None = None,
    answered: Callable[[httpx.Response], object] | None = None,
) -> Order | None:
    """One customer action against the shop (one or two requests, each shown to ``answered``). Returns the
    order when one was placed."""
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
            placed = response.json()
            trace = (placed.get("mail_job") or {}).get("trace") or {}
            return Order(int(placed["total_cents"]), {k: str(v) for k, v in trace.items() if v})
    return None


@dataclass(frozen=True)
class Site:
    """Where the demo's browsers post: the shop's tunnel, with the project's browser DSN, as pages of
    ``origin`` in ``environment``."""

    dsn: str
    origin: str
    environment: str
    # StackLens's envelope endpoint of the browser DSN, where the page's feedback widget posts
    # (demo.feedback); "" when the demo runs without one (then no feedback is sent).
    envelope_url: str = ""


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
) -> Order | None:
    """One browser page load at ``at`` through the shop's tunnel, with the session `@sentry/browser` starts
    for it; now and then a JavaScript error (with the session's update: errored, or crashed when unhandled),
    half of those with the replay of the session that led to it. Session updates travel in the envelope of
    the page load or error they belong to (one post each, not two). What the tunnel accepted goes to
    ``tally``, what it refused too; a request it never answered (after :mod:`demo.delivery`'s
    retries) raises. ``history``: a moment of the backfill (the shop is told, see :func:`_tunnel`).

    A load of the checkout page really places its order (:func:`_browser_checkout`), in the history too: the
    order, whose mail job continues the page's trace, is returned."""
    clock = {CLOCK_HEADER: encode_clock(at, release.name)} if history else {}
    customer = rng.choice(CUSTOMERS) if rng.random() > 0.4 else None
    user = customer.id if customer else None
    load = browser_pageloads.pageload(
        rng, site.origin, release, site.environment, at, user, fail_api=rng.random() < 0.05
    )
    order = _browser_checkout(client, load, customer, release.name if history else None, tally, day)
    session = browser_errors.page_session(load, release, site.environment, at, user)
    refused = _tunnel(client, browser.envelope(site.dsn, [load], [session]), clock, tally, day)
    tally.record(day, PAGE_LOADS, refused)
    tally.record(day, BROWSER_SESSIONS, refused)
    # The visitor's slow clicks as the INP attribution sends them (Chromium only), in their own envelope;
    # drawn from the page load's own seed, so the rest of the seeded traffic is unchanged.
    clicks = browser_interactions.interactions(load, site.origin)
    if clicks:
        _tunnel(client, browser.envelope(site.dsn, clicks), clock, tally, day)
    if rng.random() >= 0.12:
        return order
    # About one visitor in 40 has a device whose clock runs a week ahead: the service stores such an error
    # under its receive time and the event page says so. (Only where a week ahead is still in the future: an
    # older history day's "week ahead" would be an ordinary past time on the wrong day.)
    skewed = at + timedelta(days=7)
    sent = skewed if int(at.timestamp()) % 40 == 0 and skewed > datetime.now(UTC) else at
    error = browser_errors.js_error(rng, site.origin, release, site.environment, sent, user)
    update = browser_errors.session_after_error(session, error, release)
    replay: list[bytes] = []
    if sent == at and int(error["event_id"][:2], 16) % 2 == 0:  # half the errors come with a replay
        replay = _recorded(site.dsn, site.origin, release, site.environment, error)
    refused = _tunnel(client, browser.envelope(site.dsn, [error], [update]), clock, tally, day)
    tally.record(day, JS_ERRORS, refused)
    if not refused and site.envelope_url and feedback.writes_feedback(error):
        # The widget is sent a little after the error, at its moment in the history too (StackLens lists a
        # feedback under the time it was written, as it stores an event under its own).
        why = feedback.send_feedback(site.envelope_url, site.dsn, error, sent + timedelta(seconds=40))
        if why:  # the widget's failure is the visitor's, not the page load's: said, not raised
            print(f"feedback: {why}", flush=True)
    if replay:
        refused = next(
            (why for why in (_tunnel(client, body, clock, tally, day) for body in replay) if why), ""
        )
        tally.record(day, REPLAYS, refused)
    return order


def _browser_checkout(
    client: httpx.Client,
    load: dict[str, Any],
    customer: Customer | None,
    history: str | None = None,
    tally: Tally | None = None,
    day: date | None = None,
) -> Order | None:
    """The checkout page's fetch of ``POST /api/checkout``, sent for real with the fetch span's trace header
    (as @sentry/browser sends it to a traced API), so the shop's request continues the page load's trace; the
    span then says what the shop answered. Its own random source (seeded by the page load), so the rest of the
    seeded traffic is unchanged. ``history``: the release of a backfilled page load, whose request the shop
    then records at the fetch's moment (the demo clock); it is counted in ``tally`` as a history visit's."""
    fetch = next(
        (
            s
            for s in load.get("spans", [])
            if s.get("op") == "http.client" and "/api/checkout" in s["description"]
        ),
        None,
    )
    if fetch is None:
        return None
    own = random.Random(load["event_id"])
    trace = {"sentry-trace": f"{fetch['trace_id']}-{fetch['span_id']}-1"}
    # The demo clock puts the end of the shop's request at the moment it names: a history fetch is answered
    # a second after its drawn start, and the span then covers what the shop really took around that moment.
    answered = float(fetch["start_timestamp"]) + 1.0
    if history is not None:
        trace[CLOCK_HEADER] = encode_clock(datetime.fromtimestamp(answered, UTC), history)
    sent = time.time()
    response = client.post(
        "/api/checkout", json=_checkout_body(own, customer), headers={**_headers(own, customer), **trace}
    )
    took = time.time() - sent
    if history is None:  # live: the shop's request ran now, and the span says so
        answered = time.time()
    fetch["start_timestamp"], fetch["timestamp"] = answered - took - 0.002, answered + 0.002
    if history is not None and tally is not None and day is not None:
        tally.add(day, REQUESTS)
        tally.add(day, SERVER_SESSIONS)  # the shop's SDK makes every request a session (request mode)
        if response.status_code >= 400:
            tally.add(day, ERROR_ANSWERS)
    fetch["data"]["http.response.status_code"] = response.status_code
    fetch["status"] = "ok" if response.status_code < 400 else "invalid_argument"
    if response.status_code != 200:
        return None
    placed = response.json()
    job = (placed.get("mail_job") or {}).get("trace") or {}
    placed_at = datetime.fromtimestamp(fetch["timestamp"], UTC)
    return Order(int(placed["total_cents"]), {k: str(v) for k, v in job.items() if v}, placed_at)


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
def worker_job(clock: str | None = None, trace: dict[str, str] | None = None) -> Iterator[None]:
    """One job of the worker as a `queue.process` transaction on a scope of its own, continuing ``trace`` (the
    trace headers the shop gave the job; none: a new trace). The job's events and log records share that
    trace, no other job does. ``clock``: a history job's moment, for its transaction and its log records
    (:func:`demo.clock.apply_demo_clock`, :func:`demo.clock.apply_demo_clock_to_log`)."""
    token = REQUEST_CLOCK.set(clock or "")
    try:
        with sentry_sdk.isolation_scope(), sentry_sdk.new_scope() as scope:
            if clock:
                scope.set_context(CLOCK_CONTEXT, {"value": clock})
            job = sentry_sdk.continue_trace(trace or {}, op="queue.process", name="order-mail")
            with sentry_sdk.start_transaction(job):
                yield
    finally:
        REQUEST_CLOCK.reset(token)


def send_order_mail(
    rng: random.Random,
    total_cents: int,
    capture: Callable[[BaseException], Any],
    clock: str | None = None,
    trace: dict[str, str] | None = None,
) -> bool:
    """The worker's receipt for an order, as one job (continuing the checkout's ``trace``, with its log
    records); whether it went out (a failure is captured by the worker's SDK)."""
    customer = rng.choice(CUSTOMERS)
    email = customer.email if rng.random() > 0.05 else customer.email.replace("@", " at ")
    order = f"ord_{rng.getrandbits(32):08x}"
    with worker_job(clock, trace):
        try:
            with sentry_sdk.start_span(op="smtp", name="send receipt"):
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
