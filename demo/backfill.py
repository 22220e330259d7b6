"""The demo's history: the same traffic as live (:mod:`demo.traffic`) replayed for past weeks, release by
release, once per data directory, days cut in slices that threads share; a slice the shop stops answering is
given up and its loss said."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, date, datetime, timedelta
from typing import Any

import httpx

from demo import browser
from demo.arrivals import Arrival, arrivals
from demo.backfill_report import BackfillReport
from demo.clock import CLOCK_HEADER, encode_clock
from demo.delivery import (
    ERROR_ANSWERS,
    MAIL_ERRORS,
    MAILS,
    REQUESTS,
    SERVER_SESSIONS,
    VISITS,
    Tally,
    describe,
)
from demo.traffic import CURRENT_RELEASE, Order, Site, page_load, release_at, send_order_mail, shop_visit

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
                order = page_load(shop, rng, site, release, arrival.at, tally, day, history=True)
                # The checkout page placed an order: its mail job continues the page's trace (browser, shop
                # and worker in one trace), just after the shop answered; its own random source.
                if order is not None and capture_at is not None:
                    own = random.Random(str(order.trace))
                    mailed_at = (order.placed_at or arrival.at) + timedelta(milliseconds=40)
                    _history_mail(own, order, mailed_at, release, day, tally, capture_at)
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

    order = shop_visit(shop, rng, {CLOCK_HEADER: encode_clock(at, release.name)}, answered)
    tally.add(day, VISITS)
    if order is not None and capture_at is not None:
        _history_mail(rng, order, at + timedelta(seconds=2), release, day, tally, capture_at)


def _history_mail(
    rng: random.Random,
    order: Order,
    mailed_at: datetime,
    release: browser.ReleaseShape,
    day: date,
    tally: Tally,
    capture_at: Callable[[datetime, str], Callable[[BaseException], Any]],
) -> None:
    """The worker's mail job for a history order, at ``mailed_at``, continuing the order's trace."""
    mailed = send_order_mail(
        rng,
        order.total_cents,
        capture_at(mailed_at, release.name),
        encode_clock(mailed_at, release.name),
        order.trace,
    )
    tally.add(day, MAILS if mailed else MAIL_ERRORS)


def releases_side_by_side(
    slices: list[tuple[int, datetime, datetime, int]], days: int
) -> list[tuple[int, datetime, datetime, int]]:
    """The slices in the order they are sent: one of each release in turn, each release's oldest first.

    A history checkout's fetch is timed by the shop's real answer (demo.traffic), so the machine's load while
    a release's days are sent shows in that release's API p95. Sent oldest day first, each release had its
    own minute of the backfill, and a busier minute (a test suite beside it) made shop@1.2.0 an API
    "regression" against shop@1.1.0; side by side, every release meets the same load."""
    by_release: dict[str, list[tuple[int, datetime, datetime, int]]] = {}
    for item in slices:
        offset = item[0]
        release = release_at(offset, days) if offset else CURRENT_RELEASE
        by_release.setdefault(release.name, []).append(item)
    queues = list(by_release.values())
    longest = max((len(queue) for queue in queues), default=0)
    return [queue[turn] for turn in range(longest) for queue in queues if turn < len(queue)]


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

    ``capture_at(at, release)`` gives the order-mail worker's capture for a moment of the history (the
    driver's SDK shifts the event there); without it no mails are sent. Slices of six hours run side by
    side on ``workers`` threads (the shop's latencies are sleeps: this keeps 35 days to a minute or two),
    one of each release in turn (:func:`releases_side_by_side`).
    Nothing is dropped without a word: the report counts what landed and what was lost, per kind and day."""
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
        list(pool.map(one_slice, releases_side_by_side(slices, days)))
    return BackfillReport.of(
        tally,
        [(today - timedelta(days=offset)).date() for offset in range(days, 0, -1)],
        today.date(),
        (release_at(days, days).name, CURRENT_RELEASE.name),
        time.monotonic() - started,
    )
