"""The waterfall of one page load of a seeded warehouse: its spans (the navigation-timing ones as phases), the
FCP and LCP markers, render-blocking resources marked; another organization's page load and a bad id are
none."""

from __future__ import annotations

from stacklens.performance import waterfall
from tests.stacklens.performance.read_worlds import ORG, OTHER, PROJECT


def test_waterfall_of_one_page_load(reads_world) -> None:
    client, data = reads_world
    tx = next(t for t in data.transactions if t["op"] == "pageload" and t["browser_name"] == "Chrome")
    found = waterfall.waterfall(client, ORG, PROJECT, str(tx["event_id"]))
    assert found is not None
    spans = [s for s in data.spans if s["transaction_event_id"] == tx["event_id"]]
    assert len(found["spans"]) == len([s for s in spans if not s["op"].startswith("browser")])
    assert [p["phase"] for p in found["phases"]] == ["TTFB", "DOM ready"]
    assert {m["name"] for m in found["markers"]} >= {"FCP", "LCP"}
    assert any(s["render_blocking"] == "blocking" for s in found["spans"])
    assert waterfall.waterfall(client, OTHER, PROJECT, str(tx["event_id"])) is None
    assert waterfall.waterfall(client, ORG, PROJECT, "not-a-uuid") is None
