"""Page-load reads of the performance view: the overview, the page table, one page over time, weekly trends
and release impact, all from the page loads of the filtered window, so every filter (environment, release,
browser) applies to every figure. The window comes from the minute, hour, day and block-of-days states of
``pageload_periods`` that tile it (minutes at its partial edge hours), the Dagster asset of the same name
built from ``pageload_facts`` (named queries in ``warehouse_sql/queries/performance``, macro
``pageload_window``): counts are exact, percentiles come from merged 1 % log histograms (within 0.5 % of the
exact ones) and the page samples from the states' own fastest and slowest page loads and per-bucket examples
(``pageload_examples``). The client is passed in; nothing here knows about HTTP or templates.

Each read returns typed rows (:class:`~stacklens.performance.page_load_rows.PageRow`,
:class:`~stacklens.performance.page_load_rows.DayRow`, …, in :mod:`stacklens.performance.page_load_rows`): the
views, the exports and the release pages read them by these keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, timedelta
from typing import Any, cast

from clickhouse_connect.driver.client import Client

from stacklens.metrics.formatting import unit_text
from stacklens.performance import score as sc
from stacklens.performance.page_load_rows import (
    DayRow,
    DistributionRow,
    PageRow,
    PageTotals,
    SampleRow,
    VitalSummaryRow,
    WeekRow,
)
from stacklens.releases.impact import ReleaseRow, release_rows
from stacklens.view_filters import ViewFilters
from stacklens.warehouse.queries import float_or_none, run_query
from stacklens.warehouse.side_by_side import side_by_side

VITALS = ("lcp", "inp", "cls", "fcp", "ttfb")


def _p75(raw: dict[str, Any], metric: str) -> float | None:
    """A metric's p75 in a raw row, ``None`` without samples (its ``<metric>_n`` is 0)."""
    return float_or_none(raw[f"{metric}_p75"]) if int(raw[f"{metric}_n"]) else None


def _score(raw: dict[str, Any]) -> float | None:
    """The mean score in a raw row, ``None`` without scored page loads."""
    return float_or_none(raw["score_mean"]) if int(raw["score_n"]) else None


def load_params(
    org_id: int, project_id: int, filters: ViewFilters, page: str = "", per_day: bool = False, **extra: object
) -> dict[str, object]:
    """The parameters of a page-load query: the filters, the page ('' = any), the window's whole hours and
    days (what the examples of the median samples are read by) and the periods that tile the window
    (minutes, hours, days: what the states answer); ``per_day`` for a query that groups by day (single
    days, never blocks)."""
    return {
        **filters.sql(org_id, project_id),
        "page": page,
        **filters.whole_hours(),
        **filters.periods(per_day=per_day, minutes=True),
        **extra,
    }


def change_pct(current: float | None, previous: float | None) -> float | None:
    if current is None or previous is None or previous == 0:
        return None
    return 100.0 * (current - previous) / previous


def facets(client: Client, org_id: int, project_id: int, filters: ViewFilters) -> dict[str, list[str]]:
    """The environments, releases and browsers the filters can pick from (most page loads first)."""
    out: dict[str, list[str]] = {"environment": [], "release": [], "browser": []}
    # Every value of the window, whatever the filters pick now.
    params = load_params(org_id, project_id, filters, environment="", release="", browser="")
    for row in run_query(client, "performance/facets", params):
        out[row["dim"]].append(row["value"])
    return out


def _page_totals_row(raw: dict[str, Any]) -> PageTotals:
    """A page's figures (or the project's); a vital's keys are named after it (``lcp_p75``, ``lcp_n``,
    ``lcp_rating``), so the row is built by name and typed once it is whole."""
    row: dict[str, object] = {"page": raw["page"], "views": int(raw["views"])}
    for key in ("load_avg", "load_p75", "ttfb_avg", "dom_avg", "resource_avg", "api_calls_avg"):
        row[key] = float_or_none(raw[key])
    row["score"] = _score(raw)
    for key in ("ttfb_n", "dom_n", "resource_n", "score_n"):
        row[key] = int(raw[key])
    for vital in VITALS:
        p75 = _p75(raw, vital)
        row[f"{vital}_p75"] = p75
        row[f"{vital}_n"] = int(raw[f"{vital}_n"])
        row[f"{vital}_rating"] = sc.rating(vital, p75)
    return cast(PageTotals, row)


def _split_pages(raws: list[dict[str, Any]]) -> tuple[PageTotals | None, list[PageRow]]:
    """``(project totals or None, per-page rows)`` of raw page-table rows; each page row gets its score
    opportunity."""
    total: PageTotals | None = None
    measured: list[PageTotals] = []
    for raw in raws:
        if int(raw["views"]) == 0:
            continue
        row = _page_totals_row(raw)
        if int(raw["is_total"]):
            total = row
        else:
            measured.append(row)
    scored = total["score_n"] if total else 0
    rows: list[PageRow] = [
        {**row, "opportunity": sc.opportunity(row["score_n"], row["score"], scored)} for row in measured
    ]
    return total, rows


def pages(
    client: Client, org_id: int, project_id: int, filters: ViewFilters
) -> tuple[PageTotals | None, list[PageRow]]:
    """``(project totals or None, per-page rows)``; each page row carries its score opportunity."""
    return _split_pages(run_query(client, "performance/pages", load_params(org_id, project_id, filters)))


def overview(
    client: Client, org_id: int, project_id: int, filters: ViewFilters
) -> tuple[PageTotals | None, list[PageRow], list[DayRow]]:
    """``(project totals or None, per-page rows, per-day rows)``: what :func:`pages` and :func:`daily` return,
    from one read of the window (the overview shows both)."""
    raws = run_query(client, "performance/overview", load_params(org_id, project_id, filters, per_day=True))
    table = [{**r, "is_total": int(not r["is_page"])} for r in raws if not r["is_day"]]
    total, rows = _split_pages(table)
    return total, rows, [_day_row({**r, "key": ""}) for r in raws if r["is_day"]]


def vitals_summary(total: PageTotals | None) -> list[VitalSummaryRow]:
    """The overview's rows: the score and each web vital's p75 with its rating and sample count."""
    if total is None:
        return []
    rows: list[VitalSummaryRow] = [
        {
            "metric": "score",
            "label": "Performance score",
            "value": total["score"],
            "unit": unit_text("score"),
            "samples": total["score_n"],
            "rating": sc.score_rating(total["score"]),
        }
    ]
    by_name: Mapping[str, Any] = total  # each vital's keys are named after it: lcp_p75, lcp_n, lcp_rating
    for vital in ("lcp", "inp", "cls", "fcp", "ttfb"):
        good, poor = sc.THRESHOLDS[vital]
        rows.append(
            {
                "metric": vital,
                "label": sc.VITAL_LABELS[vital],
                "value": by_name[f"{vital}_p75"],
                "unit": unit_text(vital),  # rows of several units: each says its own (ms, or none for CLS)
                "samples": by_name[f"{vital}_n"],
                "rating": by_name[f"{vital}_rating"],
                "good_at_most": good,
                "poor_above": poor,
            }
        )
    return rows


def _day_row(raw: dict[str, Any]) -> DayRow:
    """One day's figures; a metric's keys are named after it (``lcp_n``, ``lcp_p75``), so the row is built by
    name and typed once it is whole."""
    row: dict[str, object] = {"key": raw["key"], "day": raw["day"], "views": int(raw["views"])}
    row["load_p75"] = float_or_none(raw["load_p75"])
    row["load_avg"] = float_or_none(raw["load_avg"])
    for metric in ("ttfb", "dom", "lcp", "inp", "cls", "fcp"):
        row[f"{metric}_n"] = int(raw[f"{metric}_n"])
        row[f"{metric}_p75"] = _p75(raw, metric)
    row["score_n"] = int(raw["score_n"])
    row["score"] = _score(raw)
    return cast(DayRow, row)


def daily(
    client: Client, org_id: int, project_id: int, filters: ViewFilters, page: str = "", by_page: bool = False
) -> list[DayRow]:
    """Per day (and per page with ``by_page``): views, p75 of each metric with its count, mean score."""
    params = load_params(org_id, project_id, filters, page, per_day=True, by_page=int(by_page))
    return [_day_row(raw) for raw in run_query(client, "performance/daily", params)]


def sparklines(
    client: Client, org_id: int, project_id: int, filters: ViewFilters
) -> dict[str, list[float | None]]:
    """Per page, the daily p75 load time of the 7 days ending at the window's end, oldest first; ``None``
    for a day without page loads (a gap in the sparkline, never 0 ms)."""
    week = ViewFilters(
        since=max(filters.since, filters.until - timedelta(days=7)),
        until=filters.until,
        environment=filters.environment,
        release=filters.release,
        browser=filters.browser,
    )
    first = week.since.date()
    last = (week.until - timedelta(microseconds=1)).date()  # an end at midnight is the day before's end
    days = [first + timedelta(days=i) for i in range((last - first).days + 1)]
    series: dict[str, dict[date, float | None]] = {}
    params = load_params(org_id, project_id, week, per_day=True)
    for row in run_query(client, "performance/sparklines", params):
        series.setdefault(row["key"], {})[row["day"]] = float_or_none(row["load_p75"])
    return {page: [values.get(day) for day in days] for page, values in series.items()}


def _week_rows(raws: list[dict[str, Any]]) -> list[WeekRow]:
    """Weekly rows (ordered by key, week) with each against the previous week of the same key."""
    out: list[WeekRow] = []
    previous: dict[str, WeekRow] = {}
    for raw in raws:
        key, week_start, load_p75 = raw["key"], raw["week_start"], float_or_none(raw["load_p75"])
        before = previous.get(key)
        # Only an adjacent week is "the previous week": a gap means no comparison, not a comparison with older
        # data.
        if before is not None and before["week_start"] + timedelta(days=7) != week_start:
            before = None
        row: WeekRow = {
            "key": key,
            "week_start": week_start,
            "iso_week": f"{int(raw['iso_year'])}-W{int(raw['iso_week']):02d}",
            "views": int(raw["views"]),
            "load_avg": float_or_none(raw["load_avg"]),
            "load_p75": load_p75,
            "lcp_p75": _p75(raw, "lcp"),
            "lcp_n": int(raw["lcp_n"]),
            "score": _score(raw),
            "score_n": int(raw["score_n"]),
            "prev_views": before["views"] if before else None,
            "prev_load_p75": before["load_p75"] if before else None,
            "load_change_pct": change_pct(load_p75, before["load_p75"] if before else None),
        }
        previous[key] = row
        out.append(row)
    return out


def weekly(
    client: Client, org_id: int, project_id: int, filters: ViewFilters, page: str = "", by_page: bool = False
) -> list[WeekRow]:
    """Per ISO week (and page): views, load avg and p75, LCP p75, score, each against the previous week."""
    params = load_params(org_id, project_id, filters, page, per_day=True, by_page=int(by_page))
    return _week_rows(run_query(client, "performance/weekly", params))


def trends(
    client: Client, org_id: int, project_id: int, filters: ViewFilters
) -> tuple[list[WeekRow], list[WeekRow]]:
    """``(weekly rows of the project, weekly rows per page)``: what :func:`weekly` returns without and with
    ``by_page``, from one read of the window (the trends view shows both)."""
    raws = run_query(client, "performance/trends", load_params(org_id, project_id, filters, per_day=True))
    return (
        _week_rows([r for r in raws if not r["is_page"]]),
        _week_rows([r for r in raws if r["is_page"]]),
    )


def _distribution_row(metric: str, bucket: int, loads: int) -> DistributionRow:
    if metric == "cls":
        low, high = bucket / 100, (bucket + 1) / 100
    else:
        low, high = 10 ** (bucket / 10), 10 ** ((bucket + 1) / 10)
    return {"from": low, "to": high, "loads": loads}


def distribution(
    client: Client, org_id: int, project_id: int, filters: ViewFilters, page: str
) -> dict[str, list[DistributionRow]]:
    """Per metric, the page loads per bucket: ``{metric: [{"from": low, "to": high, "loads": n}]}``."""
    out: dict[str, list[DistributionRow]] = {}
    params = load_params(org_id, project_id, filters, page)
    for raw in run_query(client, "performance/distribution", params):
        row = _distribution_row(raw["metric"], int(raw["bucket"]), int(raw["loads"]))
        out.setdefault(raw["metric"], []).append(row)
    return out


# The metrics of the `dist` keys (metric * 2^32 + bucket), as distribution.sql names them.
DIST_METRICS = ("load", "ttfb", "lcp", "fcp", "inp", "cls")


def page_detail(
    client: Client, org_id: int, project_id: int, filters: ViewFilters, page: str
) -> tuple[list[DayRow], list[WeekRow], dict[str, list[DistributionRow]], list[SampleRow]]:
    """``(daily rows, weekly rows, distribution, samples)`` of one page: what :func:`daily`, :func:`weekly`,
    :func:`distribution` and :func:`samples` return for it, from two reads of the window at once (two
    clients): the days and weeks (page_detail.sql, single days), and the distribution with the samples
    (page_totals.sql, blocks of days, then the median samples' read of a few buckets)."""
    series_params = load_params(org_id, project_id, filters, page, per_day=True)
    series, (counts, picks) = side_by_side(
        client,
        lambda c: run_query(c, "performance/page_detail", series_params),
        lambda c: _page_totals(c, load_params(org_id, project_id, filters, page), page),
    )
    days = sorted((_day_row(r) for r in series if r["kind"] == "day"), key=lambda r: r["day"])
    weeks = _week_rows(sorted((r for r in series if r["kind"] == "week"), key=lambda r: r["week_start"]))
    dist = {
        metric: [_distribution_row(metric, b, n) for b, n in sorted(counts[metric].items())]
        for metric in sorted(counts)
    }
    return days, weeks, dist, picks


def _page_totals(
    client: Client, params: dict[str, object], page: str
) -> tuple[dict[str, dict[int, int]], list[SampleRow]]:
    """``({metric: {bucket: page loads}}, samples)`` of one page's window (page_totals.sql)."""
    total = run_query(client, "performance/page_totals", params)[0]
    counts: dict[str, dict[int, int]] = {}
    for key, loads in zip(*total["dist"], strict=True):
        metric = (int(key) + 2**31) // 2**32
        counts.setdefault(DIST_METRICS[metric - 1], {})[int(key) - metric * 2**32] = int(loads)
    return counts, _samples(client, params, page, total)


def samples(client: Client, org_id: int, project_id: int, filters: ViewFilters, page: str) -> list[SampleRow]:
    """The fastest, median and slowest page loads (3 each) of a page, each opening its waterfall: the
    fastest and slowest exact, the median ones the page loads nearest the window's median
    (docs/performance.md)."""
    params = load_params(org_id, project_id, filters, page)
    return _samples(client, params, page, run_query(client, "performance/samples", params)[0])


def _samples(client: Client, params: dict[str, object], page: str, merged: dict[str, Any]) -> list[SampleRow]:
    """The sample rows of ``page`` from the window's merged 3 fastest, 3 slowest and load-time median
    (``merged``: a row of samples.sql or page_totals.sql), the median ones read from the buckets around the
    median."""
    median = float_or_none(merged["load_p50"])
    nearest = (
        run_query(client, "performance/sample_medians", {**params, "median": median})
        if median is not None
        else []
    )
    picked = [("fastest", (r[1], r[2], r[0], r[3])) for r in merged["fastest"]]
    picked += [("median", (r["event_id"], r["ts"], r["load_ms"], r["score"])) for r in nearest]
    picked += [("slowest", (r[1], r[2], r[0], r[3])) for r in merged["slowest"]]
    order = {"fastest": 0, "median": 1, "slowest": 2}
    rows: list[SampleRow] = [
        {"kind": kind, "event_id": e, "page": page, "ts": ts, "load_ms": load, "score": float_or_none(score)}
        for kind, (e, ts, load, score) in picked
    ]
    # Fastest first within the fastest, slowest first within the slowest: each group leads with its extreme.
    return sorted(
        rows, key=lambda r: (order[r["kind"]], -r["load_ms"] if r["kind"] == "slowest" else r["load_ms"])
    )


def releases(
    client: Client, org_id: int, project_id: int, filters: ViewFilters, with_page_loads_only: bool = True
) -> list[ReleaseRow]:
    """Per release (by first page load): load p75 (with its 95 % interval), JS per view, API p95 and error
    share, error events and errors per 1,000 page loads, each against the release before it, and the
    release's verdict — the release health pages' rules on these figures (stacklens.releases.impact);
    ``regression`` is the verdict as one line when it is one. ``with_page_loads_only=False`` keeps releases
    that only have error events."""
    raws = run_query(client, "performance/releases", load_params(org_id, project_id, filters))
    return release_rows(raws, with_page_loads_only)
