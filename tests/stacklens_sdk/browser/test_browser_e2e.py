"""A real page in Debian's headless chromium sends @sentry/browser data through the tunnel into the log
file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.stacklens_sdk.helpers import BROWSER_DIR, lines_so_far, make_app_key, read_lines, wait_for

pytestmark = [pytest.mark.browser, pytest.mark.slow]


# @sentry/browser 11 names the resource sizes with OpenTelemetry's conventions; the names Sentry used before
# (and the performance views speak of) are on the left.
SIZE_ATTRIBUTES = {
    "http.response_content_length": "http.response.body.size",
    "http.decoded_response_content_length": "http.response.body.decoded_size",
    "http.response_transfer_size": "http.response.size",
}


def _of_type(lines: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [line for line in lines if line["type"] == kind]


def _pageload(lines: list[dict[str, Any]]) -> dict[str, Any] | None:
    for line in _of_type(lines, "transaction"):
        if line["payload"].get("contexts", {}).get("trace", {}).get("op") == "pageload":
            return line
    return None


def _inp_spans(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The standalone INP spans: @sentry/browser 11 sends a v2 span container ``{"version": 2, "items":
    [...]}``."""
    return [
        span
        for line in _of_type(lines, "span")
        for span in line["payload"].get("items", [])
        if "browser.web_vital.inp.value" in span.get("attributes", {})
    ]


def test_page_errors_and_pageload_reach_the_log_file(
    chromium, tmp_path: Path, start_server: Any, sentry_browser_bundle: Path
) -> None:
    storage = tmp_path / "logs"
    key = make_app_key()
    server = start_server(
        BROWSER_DIR,
        "app:app",
        {
            "STACKLENS_TEST_APP_KEY": key,
            "STACKLENS_TEST_STORAGE": str(storage),
            "STACKLENS_TEST_BUNDLE": str(sentry_browser_bundle),
        },
    )
    page = chromium.new_page(viewport={"width": 1280, "height": 800})
    page.goto(server.base_url + "/", wait_until="load")
    page.wait_for_selector("#products li")
    page.click("#checkout")
    # A click whose handler blocks the main thread ~600 ms: the slow interaction INP reports.
    page.click("#recommend")
    assert wait_for(lambda: _of_type(lines_so_far(storage), "event"), timeout=15), "no error event written"
    # The pageload transaction ends by itself after 4 s without activity (the page's idleTimeout). Leaving
    # the page (pagehide, visibility hidden) finalises LCP and CLS when the user goes on first, and is what
    # reports INP: @sentry/browser sends it then as a standalone span, naming the page load when the click
    # came while it was open (clicks after it ended went unnamed, or unreported, on a loaded machine).
    wait_for(lambda: _pageload(lines_so_far(storage)), timeout=9)
    page.goto(server.base_url + "/next", wait_until="load")
    assert wait_for(lambda: _pageload(lines_so_far(storage)), timeout=15), "no pageload transaction"
    assert wait_for(lambda: _inp_spans(lines_so_far(storage)), timeout=15), "no INP span"
    page.context.close()  # the page gone, as when the test closed a browser of its own

    lines = read_lines(storage)
    assert all(line["app_key"] == key and line["v"] == 1 for line in lines)

    # -- the error event ----------------------------------------------------------------------------------
    event = _of_type(lines, "event")[0]["payload"]
    exc = event["exception"]["values"][-1]
    assert exc["type"] == "TypeError"
    frames = exc["stacktrace"]["frames"]
    assert len(frames) >= 2
    functions = [frame.get("function") for frame in frames]
    assert any(name and "applyDiscount" in name for name in functions), functions
    assert all(frame["filename"].startswith(server.base_url) for frame in frames if "lineno" in frame)
    assert all(isinstance(frame.get("lineno"), int) for frame in frames if frame["filename"].endswith(".js"))
    assert event["platform"] == "javascript"
    assert event["release"] == "shop-web@1.4.2" and event["environment"] == "test"
    assert event["request"]["url"] == server.base_url + "/"
    assert "User-Agent" in event["request"]["headers"]
    categories = {crumb["category"] for crumb in event["breadcrumbs"]}
    assert {"ui.click", "fetch"} <= categories, categories

    # -- the pageload transaction ----------------------------------------------------------------------------
    tx = _pageload(lines)["payload"]
    assert tx["type"] == "transaction" and tx["transaction"] == "/"
    measurements = tx["measurements"]
    for name in ("ttfb", "fcp", "lcp", "cls"):
        assert name in measurements, (name, sorted(measurements))
        assert measurements[name]["value"] >= 0
    assert measurements["cls"]["value"] > 0, "the inserted banner shifts the layout"
    assert measurements["lcp"]["value"] > 0

    spans = tx["spans"]
    ops = {span["op"] for span in spans}
    assert {"browser.dom_content_loaded_event", "browser.load_event"} <= ops, sorted(ops)

    resources = {
        span["description"].rsplit("/", 1)[-1]: span for span in spans if span["op"].startswith("resource.")
    }
    for name in ("style.css", "sentry.bundle.js", "hero.png"):
        assert name in resources, sorted(resources)
        data = resources[name]["data"]
        for attr in SIZE_ATTRIBUTES.values():
            assert isinstance(data.get(attr), int) and data[attr] > 0, (name, attr, data)
    assert resources["style.css"]["op"] == "resource.link"
    assert resources["sentry.bundle.js"]["op"] == "resource.script"
    assert resources["style.css"]["data"]["resource.render_blocking_status"] == "blocking"
    assert resources["sentry.bundle.js"]["data"]["resource.render_blocking_status"] == "blocking"
    assert resources["hero.png"]["data"]["resource.render_blocking_status"] == "non-blocking"
    bundle_size = sentry_browser_bundle.stat().st_size
    assert resources["sentry.bundle.js"]["data"]["http.response.body.decoded_size"] == bundle_size
    assert (
        resources["hero.png"]["data"]["http.response.body.size"]
        == (BROWSER_DIR / "static/hero.png").stat().st_size
    )

    http_spans = {span["description"]: span for span in spans if span["op"] == "http.client"}
    assert http_spans["GET /api/products"]["data"]["http.response.status_code"] == 200
    assert http_spans["GET /api/missing"]["data"]["http.response.status_code"] == 404
    assert http_spans["GET /api/missing"]["status"] != "ok"

    # -- INP: a standalone span for the slow click, naming the page it happened on -------------------------
    inp = max(_inp_spans(lines), key=lambda span: span["attributes"]["browser.web_vital.inp.value"]["value"])
    attributes = {name: item["value"] for name, item in inp["attributes"].items()}
    assert attributes["sentry.op"] == "ui.interaction.click"
    assert attributes["browser.web_vital.inp.target"] == "body > button#recommend"
    # The handler blocks ~600 ms; the value is the interaction's whole latency, so at least that.
    assert 550 <= attributes["browser.web_vital.inp.value"] < 5000, attributes
    assert attributes["sentry.transaction"] == "/"
    assert attributes["sentry.release"] == "shop-web@1.4.2" and attributes["sentry.environment"] == "test"
    assert attributes["sentry.pageload.span_id"] == tx["contexts"]["trace"]["span_id"]
    assert inp["trace_id"] == tx["contexts"]["trace"]["trace_id"]
    assert inp["end_timestamp"] > inp["start_timestamp"]
