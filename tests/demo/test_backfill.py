"""The demo's history (demo/backfill.py): a shop that stops answering loses traffic loudly, each slice
given up and its loss said."""

from __future__ import annotations

import random
import socket
from datetime import UTC, datetime, timedelta

import httpx

from demo import backfill, delivery, traffic
from stacklens_sdk.tunnel import browser_dsn


def test_a_shop_that_stops_answering_loses_traffic_loudly() -> None:
    with socket.socket() as closed:  # a port nobody listens on: every request is refused
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}"
    waits: list[float] = []
    transport = delivery.RetryingTransport(sleep=waits.append)
    site = traffic.Site(browser_dsn("stacklens_app_" + "a" * 24), "https://shop.example", "production")
    with httpx.Client(base_url=url, timeout=5.0, transport=transport) as client:
        report = backfill.backfill(client, random.Random(1), site, 1, scale=0.5, workers=2)
    assert not report.complete and report.lost, report
    assert sum(sum(kinds.values()) for kinds in report.lost.values()) > 0
    assert waits and waits[0] > 0 and max(waits) <= delivery.MAX_WAIT_S  # backoff between attempts
    lines = report.lines()
    warnings = [line for line in lines if "WARNING" in line]
    assert any("history is incomplete" in w for w in warnings), lines
    assert any("ConnectError" in w for w in warnings), lines
    assert any("no page loads on" in w for w in warnings), lines


def test_the_releases_are_sent_side_by_side() -> None:
    """Every slice once, one of each release in turn, each release's days oldest first: the machine's load
    while the history is sent falls on every release alike (a checkout's fetch is timed by the shop's
    answer)."""
    days = 35
    today = datetime(2026, 11, 29, tzinfo=UTC)
    slices = [
        (
            offset,
            today - timedelta(days=offset, hours=-block),
            today - timedelta(days=offset, hours=-block - 6),
            n,
        )
        for n, (offset, block) in enumerate((o, b) for o in range(days, -1, -1) for b in range(0, 24, 6))
    ]
    sent = backfill.releases_side_by_side(slices, days)
    assert sorted(sent) == sorted(slices)

    def release(item: tuple[int, datetime, datetime, int]) -> str:
        return (traffic.release_at(item[0], days) if item[0] else traffic.CURRENT_RELEASE).name

    names = [r.name for r in traffic.RELEASES]
    assert [release(item) for item in sent[: len(names)]] == names  # the first turn: one of each
    for name in names:
        mine = [item for item in sent if release(item) == name]
        assert mine == sorted(mine, key=lambda item: (-item[0], item[1]))  # oldest first
    # No release's slices all come at the start or the end: each spans most of the sending order.
    for name in names[:-1]:
        positions = [i for i, item in enumerate(sent) if release(item) == name]
        assert positions[0] < len(names) and positions[-1] > len(sent) * 0.75, (
            name,
            positions[:3],
            positions[-3:],
        )
