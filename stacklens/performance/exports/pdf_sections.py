"""The sections of the PDF report, in order: summary (score, web vitals, budgets), pages, INP causes
(stacklens.performance.exports.pdf_inp), resources, API
endpoints, trends, release impact and recommendations — each a heading, its charts and its tables.
"""

from __future__ import annotations

from stacklens.metrics import catalog
from stacklens.performance.calendar import day_slots, fill, week_slots
from stacklens.performance.endpoint_reads import SOURCE_LABELS
from stacklens.performance.exports.pdf_inp import inp_causes
from stacklens.performance.exports.pdf_layout import Layout, bars, fmt, kb, line, metric, pct
from stacklens.performance.exports.report_data import ReportData
from stacklens.performance.exports.tables import largest_resources


def summary(layout: Layout, data: ReportData) -> None:
    overview = data.views["overview"]
    layout.heading("Summary")
    vitals = overview["rows"]
    score = next((r for r in vitals if r["metric"] == "score"), None)
    if score is not None:
        layout.note(
            f"Performance score {metric('score', score['value'])} of 100 over {fmt(score['samples'])} page loads."
        )
    layout.table(
        "Web vitals (p75)",
        ["Metric", "Value", "Rating", "Samples", "Good at most", "Poor above"],
        [
            [
                r["label"],
                metric(r["metric"], r["value"]),
                r["rating"] or "",
                fmt(r["samples"]),
                metric(r["metric"], r.get("good_at_most")),
                metric(r["metric"], r.get("poor_above")),
            ]
            for r in vitals
        ],
        (50, 35, 35, 30, 35, 35),
    )
    layout.table(
        "Budgets",
        ["Metric", "Scope", "Budget", "Current", "Samples", "Status", "Evaluated"],
        [
            [
                f"{b['description']} {b['statistic']}",
                b["scope"],
                # A floor where higher is better (uptime), a ceiling otherwise (the catalog's direction).
                _bound(b["metric"]) + metric(b["metric"], b["budget"]),
                metric(b["metric"], b["current"]),
                f"{fmt(b['samples'])} of {fmt(b['min_samples'])}",
                b["status"],
                b["evaluated_at"].strftime("%Y-%m-%d %H:%M UTC") if b["evaluated_at"] else "-",
            ]
            for b in data.budgets
        ],
        (70, 35, 30, 30, 30, 35, 40),
        empty="No budgets set for this project (Performance, Budgets, or `stacklens budgets set`).",
    )
    days = fill(overview["daily"], "day", day_slots(data.filters.since, data.filters.until))
    if overview["daily"]:
        layout.charts(
            line("Performance score per day", days, "day", "score", ""),
            line("Load time p75 per day", days, "day", "load_p75", "ms"),
            line("LCP p75 per day", days, "day", "lcp_p75", "ms"),
        )


def pages(layout: Layout, data: ReportData) -> None:
    rows = data.views["pages"]["rows"]
    layout.heading("Pages")
    if rows:
        top = rows[:12]
        layout.charts(
            bars(
                "Load time p75 per page",
                [r["page"] for r in top],
                [r["load_p75"] for r in top],
                "ms",
                lambda v: metric("load_time_ms", v, "p75"),
            ),
            height=8 + 5 * len(top),
        )
    layout.table(
        "",
        [
            "Page",
            "Views",
            "Load avg",
            "Load p75",
            "TTFB avg",
            "LCP p75",
            "INP p75",
            "CLS p75",
            "Score",
            "Opportunity",
        ],
        [
            [
                r["page"],
                fmt(r["views"]),
                metric("load_time_ms", r["load_avg"], "avg"),
                metric("load_time_ms", r["load_p75"], "p75"),
                metric("ttfb_ms", r["ttfb_avg"], "avg"),
                f"{metric('lcp_ms', r['lcp_p75'])} {r['lcp_rating'] or ''}",
                f"{metric('inp_ms', r['inp_p75'])} {r['inp_rating'] or ''}",
                f"{metric('cls', r['cls_p75'])} {r['cls_rating'] or ''}",
                metric("score", r["score"]),
                fmt(r["opportunity"], 1),
            ]
            for r in rows
        ],
        (52, 15, 22, 22, 22, 38, 38, 33, 13, 19),
    )


def resources(layout: Layout, data: ReportData) -> None:
    view = data.views["resources"]
    types = view["rows"]
    layout.heading("Resources")
    if types:
        layout.charts(
            bars(
                "Transfer per resource type",
                [r["resource_type"] for r in types],
                [r["total_bytes"] or 0 for r in types],  # a type without sizes: no bar
                "",
                kb,
            ),
            height=8 + 5 * len(types),
        )
    layout.table(
        "By type",
        [
            "Type",
            "Requests",
            "Page loads",
            "Total",
            "Avg transfer",
            "Avg load",
            "p95 load",
            "Cache hits",
            "Compression",
        ],
        [
            [
                r["resource_type"],
                fmt(r["requests"]),
                fmt(r["loads"]),
                kb(r["total_bytes"]),
                kb(r["avg_transfer_bytes"]),
                metric("resource_duration_ms", r["avg_ms"], "avg"),
                metric("resource_duration_ms", r["p95_ms"], "p95"),
                metric("cache_hit_pct", r["cache_hit_pct"]),
                metric("compression_ratio", r["compression_ratio"]),
            ]
            for r in types
        ],
        (40, 25, 25, 30, 30, 30, 30, 25, 27),
    )
    layout.table(
        "Largest resources",
        ["Resource", "Type", "Render-blocking", "Requests", "Avg size", "Avg load", "p95 load"],
        [
            [
                r["resource"],
                r["resource_type"],
                r["render_blocking"],
                fmt(r["requests"]),
                kb(r["avg_bytes"]),
                metric("resource_duration_ms", r["avg_ms"], "avg"),
                metric("resource_duration_ms", r["p95_ms"], "p95"),
            ]
            for r in largest_resources(view["resources"])
        ],
        (120, 25, 28, 20, 25, 25, 24),
    )


def endpoints(layout: Layout, data: ReportData) -> None:
    rows = data.views["endpoints"]["rows"]
    layout.heading("API endpoints")
    layout.note(
        "Measured in two places, never mixed: client (browser) rows are the API calls page loads made, timed in "
        "the browser (network included); server rows are the server's own transactions."
    )
    if rows:
        top = rows[:10]
        layout.charts(
            bars(
                "p95 of the busiest endpoints",
                [f"{r['method']} {r['path']} · {SOURCE_LABELS[r['source']]}" for r in top],
                [r["p95_ms"] for r in top],
                "ms",
                lambda v: metric("api_ms", v, "p95"),
            ),
            height=8 + 5 * len(top),
        )
    layout.table(
        "",
        ["Measured in", "Method", "Path", "Calls", "Avg", "p95", "2xx", "4xx", "5xx", "Error %"],
        [
            [
                SOURCE_LABELS[r["source"]],
                r["method"],
                r["path"],
                fmt(r["calls"]),
                metric("api_ms", r["avg_ms"], "avg"),
                metric("api_ms", r["p95_ms"], "p95"),
                fmt(r["s2xx"]),
                fmt(r["s4xx"]),
                fmt(r["s5xx"]),
                metric("error_pct", r["error_pct"]),
            ]
            for r in rows
        ],
        (26, 16, 92, 18, 24, 24, 16, 16, 16, 25),
    )


def trends(layout: Layout, data: ReportData) -> None:
    rows = data.views["trends"]["rows"]
    layout.heading("Trends")
    if rows:
        weeks = fill(rows, "iso_week", week_slots(data.filters.since, data.filters.until))
        layout.charts(
            line("Load time p75 per ISO week", weeks, "iso_week", "load_p75", "ms"),
            line(
                "Page loads per ISO week",
                [{**w, "views": w.get("views", 0)} for w in weeks],
                "iso_week",
                "views",
                "",
            ),
        )
    layout.table(
        "All pages per ISO week",
        ["Week", "Page loads", "Load avg", "Load p75", "Previous week p75", "Change"],
        [
            [
                r["iso_week"],
                fmt(r["views"]),
                metric("load_time_ms", r["load_avg"], "avg"),
                metric("load_time_ms", r["load_p75"], "p75"),
                metric("load_time_ms", r["prev_load_p75"], "p75"),
                pct(r["load_change_pct"]),
            ]
            for r in rows
        ],
        (40, 40, 45, 45, 50, 40),
    )


def releases(layout: Layout, data: ReportData) -> None:
    rows = data.views["releases"]["rows"]
    layout.heading("Release impact")
    # The verdicts of the release health pages on these figures (stacklens.releases.verdicts): each reason
    # names the figure, both values and both sample counts.
    for r in rows:
        if r["verdict"]["regression"]:
            reasons = "; ".join(r["verdict"]["reasons"])
            layout.note(f"Regression in {r['release']} against {r['previous_release']}: {reasons}.")
    layout.note(
        "Each release against the one before it: a regression needs a change larger than the stated effect size and "
        "significant at 95 % (load p75 and API p95 by their confidence intervals, errors per 1,000 page loads by a "
        "Poisson-rate test); otherwise no significant change."
    )
    layout.table(
        "",
        [
            "Release",
            "Page loads",
            "Load p75",
            "Change",
            "JS per view",
            "Change",
            "API p95",
            "Change",
            "Error events",
            "New issues",
            "Verdict",
        ],
        [
            [
                r["release"],
                fmt(r["views"]),
                fmt(r["load_p75"], 0, "ms"),
                pct(r["load_p75_change_pct"]),
                kb(r["js_bytes_per_view"]),
                pct(r["js_bytes_per_view_change_pct"]),
                fmt(r["api_p95"], 0, "ms"),
                pct(r["api_p95_change_pct"]),
                fmt(r["error_events"]),
                fmt(r["new_issues"]),
                "regression"
                if r["verdict"]["regression"]
                else ("no change" if r["verdict"]["previous_release"] else "first"),
            ]
            for r in rows
        ],
        (40, 24, 26, 22, 26, 22, 26, 22, 24, 24, 18),
    )


def recommendations(layout: Layout, data: ReportData) -> None:
    rows = data.views["recommendations"]["rows"]
    layout.heading("Recommendations")
    layout.table(
        "",
        ["Severity", "Rule", "Recommendation", "Estimated saving", "Pages"],
        [
            [
                r["severity"],
                ", ".join(rule.replace("_", " ") for rule in r.get("rules") or [r["rule"]]),
                r["message"],
                r["estimated_saving"],
                ", ".join(r["pages"]),
            ]
            for r in rows
        ],
        (18, 35, 130, 40, 44),
        empty="Nothing to recommend for this window.",
        wrap=True,
    )


SECTIONS = (summary, pages, inp_causes, resources, endpoints, trends, releases, recommendations)


def _bound(key: str) -> str:
    """How a budget limits its metric: a floor (``>=``) where higher is better (uptime), else a ceiling."""
    found = catalog.find(key)
    return ">= " if found is not None and found.better == "higher" else "<= "
