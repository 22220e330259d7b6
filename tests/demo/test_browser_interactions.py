"""The demo's slow interactions: only Chromium page loads of pages with a handler have them, each an INP span
the ingest keeps (its parts adding up to its INP), the shop's handler first party and the widget on the
shop's other host name; the same page load always gives the same interactions."""

from __future__ import annotations

import random
from datetime import UTC, datetime

from demo.browser import USER_AGENTS
from demo.browser_interactions import interactions, widget_origin
from demo.browser_pageloads import pageload
from demo.traffic import RELEASES
from stacklens.ingest.fields import Origin
from stacklens.ingest.inp import inp_rows

ORIGIN = "http://127.0.0.1:8000"


def _loads(n: int) -> list[dict]:
    rng = random.Random(3)
    return [
        pageload(rng, ORIGIN, RELEASES[0], "production", datetime.now(UTC), None, False) for _ in range(n)
    ]


def test_chromium_page_loads_carry_the_shops_interactions() -> None:
    loads = _loads(200)
    with_clicks = [(load, interactions(load, ORIGIN)) for load in loads]
    assert all(
        not spans
        for load, spans in with_clicks
        if load["request"]["headers"]["User-Agent"] != USER_AGENTS["Chrome"]
    )
    spans = [s for _, found in with_clicks for s in found]
    assert spans and interactions(loads[0], ORIGIN) == interactions(loads[0], ORIGIN)
    hosts = {script["url"].split("/")[2] for s in spans for script in s["data"]["inp.scripts"]}
    assert hosts == {"127.0.0.1:8000", "localhost:8000"}
    origin = Origin(1, 1, None, "b", 0.0)
    for span in spans:
        data = span["data"]
        parts = data["inp.input_delay"] + data["inp.processing"] + data["inp.presentation"]
        assert abs(parts - span["measurements"]["inp"]["value"]) < 0.2
        assert len(inp_rows(span, origin)) == 1


def test_the_widget_comes_from_the_other_host_name() -> None:
    assert widget_origin("http://127.0.0.1:8000") == "http://localhost:8000"
    assert widget_origin("http://localhost:8000") == "http://127.0.0.1:8000"
