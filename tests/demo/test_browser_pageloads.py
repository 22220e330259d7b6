"""The demo's page loads (demo/browser_pageloads.py): a `pageload` transaction of its release, with the web
vitals and the browser's phase, resource and API spans."""

from __future__ import annotations

import random
from datetime import UTC, datetime

from demo.browser import ReleaseShape
from demo.browser_pageloads import pageload

RELEASE = ReleaseShape("shop@1.2.0", 455_000, False, 0.95)
WHEN = datetime(2026, 11, 2, 10, tzinfo=UTC)


def test_a_page_load_is_a_pageload_transaction_with_vitals_and_spans() -> None:
    load = pageload(random.Random(1), "https://shop.example", RELEASE, "production", WHEN, "u1", False)
    assert (load["type"], load["contexts"]["trace"]["op"]) == ("transaction", "pageload")
    assert (load["release"], load["environment"]) == ("shop@1.2.0", "production")
    assert {"lcp", "cls", "fcp", "ttfb"} <= set(load["measurements"])
    assert {span["op"].split(".")[0] for span in load["spans"]} >= {"browser", "resource", "http"}
