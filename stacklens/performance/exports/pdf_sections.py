"""The sections of the PDF report, in order: summary (score, web vitals, budgets), pages, resources, API
endpoints, trends, release impact and recommendations — each a heading, its charts and its tables.
"""

from __future__ import annotations

from stacklens.performance.exports.pdf_layout import Layout, bars, fmt, kb, line, metric, pct
from stacklens.performance.exports.report_data import ReportData
from stacklens.performance.exports.tables import largest_resources


def summary(layout: Layout, data: ReportData) -> None:
    overview = data.views["overview"]
    layout.heading("Summary")
    vitals = overview["rows"]
    score = next((r for r in vitals if r["metric"] == "score"), None)
    if score is not None:
        layout.note(f"Performance score {fmt(score['value'])} of 100 over {score['samples']} page loads.")
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
                metric(b["metric"], b["budget"]),
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
    days = overview["daily"]
    if days:
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
            bars("Load time p75 per page", [r["page"] for r in top], [r["load_p75"] or 0 for r in top], "ms"),
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
                fmt(r["load_avg"]),
                fmt(r["load_p75"]),
                fmt(r["ttfb_avg"]),
                f"{fmt(r['lcp_p75'])} {r['lcp_rating'] or ''}",
                f"{fmt(r['inp_p75'])} {r['inp_rating'] or ''}",
                f"{fmt(r['cls_p75'], 3)} {r['cls_rating'] or ''}",
                fmt(r["score"]),
                fmt(r["opportunity"], 1),
            ]
            for r in rows
        ],
        (70, 18, 20, 20, 20, 30, 30, 30, 16, 20),
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
                [r["total_bytes"] for r in types],
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
                fmt(r["avg_ms"], 0, "ms"),
                fmt(r["p95_ms"], 0, "ms"),
                fmt(r["cache_hit_pct"], 0, "%"),
                fmt(r["compression_ratio"], 2, "x"),
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
                fmt(r["avg_ms"], 0, "ms"),
                fmt(r["p95_ms"], 0, "ms"),
            ]
            for r in largest_resources(view["resources"])
        ],
        (120, 25, 28, 20, 25, 25, 24),
    )


def endpoints(layout: Layout, data: ReportData) -> None:
    rows = data.views["endpoints"]["rows"]
    layout.heading("API endpoints")
    if rows:
        top = rows[:10]
        layout.charts(
            bars(
                "p95 of the busiest endpoints",
                [f"{r['method']} {r['path']}" for r in top],
                [r["p95_ms"] or 0 for r in top],
                "ms",
            ),
            height=8 + 5 * len(top),
        )
    layout.table(
        "",
        ["Source", "Method", "Path", "Calls", "Avg", "p95", "2xx", "4xx", "5xx", "Error %"],
        [
            [
                r["source"],
                r["method"],
                r["path"],
                fmt(r["calls"]),
                fmt(r["avg_ms"], 0, "ms"),
                fmt(r["p95_ms"], 0, "ms"),
                fmt(r["s2xx"]),
                fmt(r["s4xx"]),
                fmt(r["s5xx"]),
                fmt(r["error_pct"], 1, "%"),
            ]
            for r in rows
        ],
        (20, 18, 100, 20, 22, 22, 18, 18, 18, 21),
    )


def trends(layout: Layout, data: ReportData) -> None:
    rows = data.views["trends"]["rows"]
    layout.heading("Trends")
    if rows:
        layout.charts(
            line("Load time p75 per ISO week", rows, "iso_week", "load_p75", "ms"),
            line("Page loads per ISO week", rows, "iso_week", "views", ""),
        )
    layout.table(
        "All pages per ISO week",
        ["Week", "Page loads", "Load avg", "Load p75", "Previous week p75", "Change"],
        [
            [
                r["iso_week"],
                fmt(r["views"]),
                fmt(r["load_avg"], 0, "ms"),
                fmt(r["load_p75"], 0, "ms"),
                fmt(r["prev_load_p75"], 0, "ms"),
                pct(r["load_change_pct"]),
            ]
            for r in rows
        ],
        (40, 40, 45, 45, 50, 40),
    )


def releases(layout: Layout, data: ReportData) -> None:
    rows = data.views["releases"]["rows"]
    layout.heading("Release impact")
    for r in rows:
        if r["regression"]:
            layout.note(f"Regression in {r['regression']} against {r['previous_release']}.")
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
            ]
            for r in rows
        ],
        (45, 24, 26, 24, 26, 24, 26, 24, 24, 24),
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
                r["rule"].replace("_", " "),
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


SECTIONS = (summary, pages, resources, endpoints, trends, releases, recommendations)
