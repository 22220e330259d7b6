"""The page-load metrics: the web vitals' thresholds (stacklens/metrics/page_load_metrics.py)."""

from __future__ import annotations

from stacklens.metrics.catalog import CATALOG, web_vitals
from stacklens.metrics.page_load_metrics import PAGE_LOAD_METRICS
from stacklens.performance import score


def test_web_vital_thresholds_are_googles_and_the_score_bands_lighthouses() -> None:
    assert {
        name: (m.thresholds.good, m.thresholds.poor) for name, m in web_vitals().items() if m.thresholds
    } == {
        "lcp": (2500.0, 4000.0),
        "inp": (200.0, 500.0),
        "cls": (0.1, 0.25),
        "fcp": (1800.0, 3000.0),
        "ttfb": (800.0, 1800.0),
    }
    assert {n: (m.thresholds.good, m.thresholds.poor) for n, m in web_vitals().items()} == score.THRESHOLDS
    lcp = CATALOG["lcp_ms"].thresholds
    assert lcp is not None
    assert [lcp.rating(v) for v in (2500, 2500.1, 4000, 4000.1, None)] == [
        "good",
        "needs improvement",
        "needs improvement",
        "poor",
        "",
    ]
    assert [score.score_rating(v) for v in (90, 89.9, 50, 49.9, None)] == [
        "good",
        "needs improvement",
        "needs improvement",
        "poor",
        "",
    ]


def test_the_page_load_metrics_are_computed_from_page_loads_and_in_the_catalog() -> None:
    # One module per kind of data (stacklens/metrics/catalog.py): a metric of another kind is in the wrong
    # one.
    assert PAGE_LOAD_METRICS and {m.kind for m in PAGE_LOAD_METRICS} <= {"pageloads"}
    assert all(CATALOG[m.key] is m for m in PAGE_LOAD_METRICS)
