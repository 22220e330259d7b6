"""The catalog's metrics of page loads (`pageload_periods`): the timings, the web vitals, the score and the
views; :mod:`stacklens.metrics.catalog` holds them all, in order."""

from __future__ import annotations

from stacklens.metrics.definition import (
    LOG_HISTOGRAM,
    SUM_COUNT,
    TIMING_STATISTICS,
    USED_BY_ALL,
    USED_BY_VIEWS,
    Metric,
    State,
    Thresholds,
)
from stacklens.metrics.units import COUNT, MS, SCORE

_VITALS = "Google web vitals"
_EXPLORE = "Explore, dashboards' widgets"


def _timing_states(prefix: str, views_count: str = "", read_by: str = USED_BY_ALL) -> tuple[State, ...]:
    """A page-load timing's state: its count, its sum (none for the vitals: their average is the histogram's
    weighted mean) and its 1 % log histogram in `pageload_periods`."""
    count = views_count or f"{prefix}_n"
    sum_column = () if prefix in ("lcp", "inp", "cls", "fcp") else (f"{prefix}_sum",)
    return (State("pageload_periods", (count, *sum_column, f"{prefix}_hist"), LOG_HISTOGRAM, read_by),)


PAGE_LOAD_METRICS: tuple[Metric, ...] = (
    Metric(
        "load_time_ms",
        "Page load time",
        "Load time",
        MS,
        TIMING_STATISTICS,
        "p75",
        "Duration of a page load or navigation transaction, from navigation start to the load event.",
        "load",
        _timing_states("load", views_count="views"),
        aliases=("load",),
        budget=True,
    ),
    Metric(
        "ttfb_ms",
        "Time to first byte (TTFB)",
        "TTFB",
        MS,
        TIMING_STATISTICS,
        "p75",
        "Time from navigation start until the first byte of the document's response.",
        "ttfb",
        _timing_states("ttfb"),
        Thresholds(800.0, 1800.0, _VITALS),
        aliases=("ttfb",),
        budget=True,
    ),
    Metric(
        "fcp_ms",
        "First contentful paint (FCP)",
        "FCP",
        MS,
        TIMING_STATISTICS,
        "p75",
        "Time until the first text or image is painted.",
        "fcp",
        _timing_states("fcp"),
        Thresholds(1800.0, 3000.0, _VITALS),
        aliases=("fcp",),
        budget=True,
    ),
    Metric(
        "lcp_ms",
        "Largest contentful paint (LCP)",
        "LCP",
        MS,
        ("p75",),
        "p75",
        "Time until the largest image or text block in the viewport is painted.",
        "lcp",
        _timing_states("lcp"),
        Thresholds(2500.0, 4000.0, _VITALS),
        aliases=("lcp",),
        budget=True,
    ),
    Metric(
        "inp_ms",
        "Interaction to next paint (INP)",
        "INP",
        MS,
        ("p75",),
        "p75",
        "Latency of the slowest interaction of a page view (click, tap, key press) until the next paint.",
        "inp",
        (
            *_timing_states("inp"),
            # Explore (and the dashboards, shares, PDF reports and downloads built on it) reads the page
            # load's own INP measurement, as its raw rows hold it: the facts' `inp` also takes a page view's
            # INP from its later interaction spans.
            State("pageload_periods", ("own_inp_n", "own_inp_hist"), LOG_HISTOGRAM, _EXPLORE),
        ),
        Thresholds(200.0, 500.0, _VITALS),
        aliases=("inp",),
        budget=True,
    ),
    Metric(
        "cls",
        "Cumulative layout shift (CLS)",
        "CLS",
        SCORE,
        ("p75",),
        "p75",
        "The largest burst of unexpected layout shifts of a page view (unitless).",
        "cls",
        _timing_states("cls"),
        Thresholds(0.1, 0.25, _VITALS),
        budget=True,
    ),
    Metric(
        "dom_ready_ms",
        "DOM ready",
        "DOM ready",
        MS,
        ("p75", "avg"),
        "p75",
        "Time until DOMContentLoaded: the dom_ready measurement, else the end of the DOMContentLoaded span.",
        "dom",
        _timing_states("dom", read_by=USED_BY_VIEWS),
        aliases=("dom",),
    ),
    Metric(
        "resource_time_ms",
        "Total resource time per page load",
        "Resource time",
        MS,
        ("avg",),
        "avg",
        "Sum of the durations of a page load's resource spans.",
        "resource",
        (State("pageload_periods", ("resource_sum", "resource_n"), SUM_COUNT, USED_BY_VIEWS),),
        fixed_statistic=True,
    ),
    Metric(
        "score",
        "Performance score",
        "Score",
        SCORE,
        ("avg",),
        "avg",
        "Lighthouse's log-normal score of the page load's web vitals, 0-100, averaged over page loads.",
        "score",
        (State("pageload_periods", ("score_sum", "score_n"), SUM_COUNT, USED_BY_VIEWS),),
        Thresholds(90.0, 50.0, "Lighthouse score bands", higher_is_better=True),
        decimals=0,
        fixed_statistic=True,
    ),
    Metric(
        "page_loads",
        "Page loads",
        "Page loads",
        COUNT,
        ("count",),
        "count",
        "Page load and navigation transactions.",
        "views",
        (State("pageload_periods", ("views",), SUM_COUNT, USED_BY_VIEWS),),
        aliases=("views",),
        fixed_statistic=True,
    ),
)
