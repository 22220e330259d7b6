"""The typed rows of the page-load reads (:mod:`stacklens.performance.page_load_reads`): a page's totals
and its row in the page table, a web vital's summary, a day, a week, a distribution bucket and a sample
page load. The views, the exports and the release pages read them by these keys."""

from __future__ import annotations

from datetime import date, datetime
from typing import NotRequired

from typing_extensions import TypedDict


class PageTotals(TypedDict):
    """A page's figures over the window (or the project's, its ``page`` ''): views, timings (avg and p75,
    milliseconds), each web vital's p75 with its sample count and rating, the mean score and its count."""

    page: str
    views: int
    load_avg: float | None
    load_p75: float | None
    ttfb_avg: float | None
    dom_avg: float | None
    resource_avg: float | None
    api_calls_avg: float | None
    score: float | None
    ttfb_n: int
    dom_n: int
    resource_n: int
    score_n: int
    lcp_p75: float | None
    lcp_n: int
    lcp_rating: str
    inp_p75: float | None
    inp_n: int
    inp_rating: str
    cls_p75: float | None
    cls_n: int
    cls_rating: str
    fcp_p75: float | None
    fcp_n: int
    fcp_rating: str
    ttfb_p75: float | None
    ttfb_rating: str


class PageRow(PageTotals):
    """A row of the page table: the page's figures and its score opportunity (:func:`score.opportunity`)."""

    opportunity: float


class VitalSummaryRow(TypedDict):
    """A row of the overview: the score or a web vital, its p75 (the mean for the score), unit, samples and
    rating; a vital's with Google's thresholds."""

    metric: str
    label: str
    value: float | None
    unit: str
    samples: int
    rating: str
    good_at_most: NotRequired[float]
    poor_above: NotRequired[float]


class DayRow(TypedDict):
    """One day (of a page with ``key`` the page, else ``key`` ''): views, load avg, p75 of each metric with
    its count, mean score."""

    key: str
    day: date
    views: int
    load_p75: float | None
    load_avg: float | None
    ttfb_n: int
    ttfb_p75: float | None
    dom_n: int
    dom_p75: float | None
    lcp_n: int
    lcp_p75: float | None
    inp_n: int
    inp_p75: float | None
    cls_n: int
    cls_p75: float | None
    fcp_n: int
    fcp_p75: float | None
    score_n: int
    score: float | None


class WeekRow(TypedDict):
    """One ISO week (of a page with ``key`` the page, else ``key`` ''), against the previous week of the
    same key (``None`` when that week has no page loads)."""

    key: str
    week_start: date
    iso_week: str
    views: int
    load_avg: float | None
    load_p75: float | None
    lcp_p75: float | None
    lcp_n: int
    score: float | None
    score_n: int
    prev_views: int | None
    prev_load_p75: float | None
    load_change_pct: float | None


# One bucket of a metric's distribution: page loads with a value in [from, to). ("from" is a keyword: the
# functional form.)
DistributionRow = TypedDict("DistributionRow", {"from": float, "to": float, "loads": int})


class SampleRow(TypedDict):
    """A sample page load of a page: ``kind`` fastest, median or slowest."""

    kind: str
    event_id: str
    page: str
    ts: datetime
    load_ms: float
    score: float | None
