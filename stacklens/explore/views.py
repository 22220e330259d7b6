"""The performance and release views a dashboard widget can show by name (``"view": "performance.lcp"``), each
written as the Explore question that answers it: the same metrics layer, the same numbers as the view's page
(Explore's agreement with the pages is tested in tests/stacklens/explore/test_run.py), under the same
per-query limits. The widget's dashboard supplies the window, project, environment and release."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class View:
    key: str
    title: str
    page: str  # the page of the project that shows it (performance, releases), for the widget's link
    query: dict[str, Any]  # an Explore query body without its window


def _pageloads(fn: str, metric: str) -> dict[str, Any]:
    return {"dataset": "pageloads", "aggregates": [{"fn": fn, "metric": metric}], "interval": "1d"}


_VIEWS = (
    View("performance.lcp", "LCP p75", "performance", _pageloads("p75", "lcp_ms")),
    View("performance.inp", "INP p75", "performance", _pageloads("p75", "inp_ms")),
    View("performance.cls", "CLS p75", "performance", _pageloads("p75", "cls")),
    View("performance.ttfb", "TTFB p75", "performance", _pageloads("p75", "ttfb_ms")),
    View("performance.load_time", "Load time p75", "performance", _pageloads("p75", "load_time_ms")),
    View("performance.page_loads", "Page loads", "performance", _pageloads("count", "")),
    View(
        "performance.pages",
        "Pages",
        "performance/pages",
        {
            "dataset": "pageloads",
            "group_by": ["page"],
            "aggregates": [
                {"fn": "count"},
                {"fn": "p75", "metric": "lcp_ms"},
                {"fn": "p75", "metric": "inp_ms"},
                {"fn": "p75", "metric": "load_time_ms"},
            ],
            "order_by": "-count",
            "limit": 20,
        },
    ),
    View(
        "releases.health",
        "Release health",
        "releases",
        {
            "dataset": "sessions",
            "group_by": ["release"],
            "aggregates": [
                {"fn": "count"},
                {"fn": "avg", "metric": "crash_free_sessions"},
                {"fn": "avg", "metric": "crash_free_users"},
            ],
            "order_by": "release",
            "limit": 20,
        },
    ),
    View(
        "releases.crash_free_sessions",
        "Crash-free sessions",
        "releases",
        {
            "dataset": "sessions",
            "aggregates": [{"fn": "avg", "metric": "crash_free_sessions"}],
            "interval": "1d",
        },
    ),
    View(
        "releases.errors_per_1k",
        "Errors per 1,000 page loads",
        "releases",
        {"dataset": "errors", "aggregates": [{"fn": "rate_per_1k", "metric": ""}], "interval": "1d"},
    ),
)
VIEWS: dict[str, View] = {v.key: v for v in _VIEWS}
