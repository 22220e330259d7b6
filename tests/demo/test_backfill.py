"""The demo's history (demo/backfill.py): a shop that stops answering loses traffic loudly, each slice
given up and its loss said."""

from __future__ import annotations

import random
import socket

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
