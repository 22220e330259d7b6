"""The demo's live traffic (demo/live.py) against a real local HTTP server standing in for the shop: visits
and page loads arrive until told to stop, orders bring their mails, each hour is summed up, and a shop that
does not answer loses traffic loudly."""

from __future__ import annotations

import json
import random
import socket
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from demo.delivery import JS_ERRORS, MAIL_ERRORS, MAILS, PAGE_LOADS, VISITS, Tally
from demo.live import _say_hour, run_live
from demo.traffic import Site
from stacklens_sdk.tunnel import browser_dsn

SITE = Site(browser_dsn("stacklens_app_" + "a" * 24), "https://shop.example", "production")
# Thousands of arrivals an hour at this scale: the test's dozens come within a second or two.
SCALE = 2000.0


class _Shop(BaseHTTPRequestHandler):
    seen: Counter[str]

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        self.rfile.read(length)
        path = self.path.split("?")[0]
        self.seen[path.rsplit("/", 1)[0] if path.startswith("/api/products/") else path] += 1
        body = json.dumps({"total_cents": 4200}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def shop() -> Iterator[tuple[str, Counter[str]]]:
    seen: Counter[str] = Counter()
    handler = type("Shop", (_Shop,), {"seen": seen})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", seen
    server.shutdown()
    server.server_close()


def _stop_after(n: int) -> Callable[[], bool]:
    calls = Counter[str]()

    def stop() -> bool:
        calls["asked"] += 1
        return calls["asked"] > n

    return stop


def test_live_traffic_reaches_the_shop_until_stopped(shop: tuple[str, Counter[str]]) -> None:
    url, seen = shop
    said: list[str] = []
    captured: list[BaseException] = []
    with httpx.Client(base_url=url, timeout=5) as client:
        tally = run_live(client, random.Random(7), SITE, captured.append, _stop_after(80), said.append, SCALE)
    totals = tally.totals()
    assert totals[VISITS] > 0 and totals[PAGE_LOADS] > 0, totals
    # Every page load went through the tunnel; every visit asked the shop's API.
    assert seen["/tunnel"] >= totals[PAGE_LOADS]
    assert sum(n for path, n in seen.items() if path.startswith("/api/")) >= totals[VISITS]
    # Each checkout the shop answered is an order, and each order a mail (sent, or its failure captured).
    orders = seen["/api/checkout"] + seen["/api/express-checkout"]
    assert totals[MAILS] + totals[MAIL_ERRORS] == orders and len(captured) == totals[MAIL_ERRORS]
    assert not [line for line in said if "did not answer" in line]


def test_a_shop_that_does_not_answer_loses_each_arrival_loudly() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}"
    said: list[str] = []
    with httpx.Client(base_url=url, timeout=1) as client:
        tally = run_live(
            client, random.Random(3), SITE, lambda _exc: None, _stop_after(20), said.append, SCALE
        )
    assert tally.totals()[VISITS] == 0 and tally.totals()[PAGE_LOADS] == 0
    lost = [line for line in said if line.startswith("live: the shop did not answer (")]
    assert lost and all(line.endswith(("this visit is lost", "this page load is lost")) for line in lost)


def test_each_hour_is_summed_up_then_counted_afresh() -> None:
    tally, said = Tally(), []
    today = date(2026, 11, 26)
    for kind, n in ((VISITS, 5), (PAGE_LOADS, 3), (JS_ERRORS, 1), (MAILS, 2), (MAIL_ERRORS, 1)):
        tally.add(today, kind, n)
    _say_hour(said.append, tally, datetime(2026, 11, 26, 9, tzinfo=UTC))
    assert said == [
        "live 2026-11-26 09:00-10:00 UTC: 5 visits, 3 page loads, 1 JavaScript errors, 3 order mails"
    ]
    assert tally.totals()[VISITS] == 0
