"""Which tables each performance page shows, with which columns, and the rows behind them — one definition
shared by the dashboard pages (the selections such as "largest resources") and the CSV / JSON downloads, so
a download holds exactly the rows and numbers of the page for the same filters.

Columns are the view's keys (the raw numbers: milliseconds, bytes, percent), in the page's order; a column
the page shows as a sample count or a rating beside a number is a column of its own. In CSV a column holding a
catalog metric is named as the catalog names it, its unit at the end (:func:`csv_column`: ``load_p75`` →
``load_p75_ms``, ``js_bytes_per_view`` → ``js_per_view_bytes``); a column whose name already ends with its
unit (``avg_ms``, ``total_bytes``, ``error_pct``), a count or a text keeps its name. JSON keeps the view's
keys.

Each view of the JSON API is one table here (:data:`VIEW_TABLES`), so the API's ``?format=csv`` and the page's
CSV download of that table are written by the same code from the same rows: the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from clickhouse_connect.driver.client import Client

from stacklens.errors import InvalidInput, NotFound
from stacklens.json_values import plain
from stacklens.metrics.formatting import column_name
from stacklens.performance import endpoint_reads, page_load_reads, view_data
from stacklens.performance.resource_reads import ResourceRow
from stacklens.view_filters import ViewFilters, flag

# What a page renders: its named parts, each a list of rows (``{"rows": [...], "resources": [...]}``) — a
# view's data (:mod:`stacklens.performance.view_data`) or a detail page's.
PageData = Mapping[str, object]
Rows = Sequence[Mapping[str, object]]
LARGEST_RESOURCES = 25


@dataclass(frozen=True)
class Table:
    name: str
    title: str
    columns: tuple[str, ...]
    rows: Callable[[PageData], Rows]


def largest_resources(listing: Sequence[ResourceRow]) -> list[ResourceRow]:
    """The resources the Resources page lists as largest: the 25 with the highest average size."""
    return sorted(listing, key=lambda r: -r["avg_bytes"])[:LARGEST_RESOURCES]


def blocking_resources(listing: Sequence[ResourceRow]) -> list[ResourceRow]:
    """The resources some browser reported render-blocking."""
    return [r for r in listing if r["render_blocking"] == "blocking"]


def unknown_blocking(listing: Sequence[ResourceRow]) -> list[ResourceRow]:
    """Scripts and stylesheets whose render-blocking status no browser reported (Firefox, Safari)."""
    return [
        r
        for r in listing
        if r["render_blocking"] == "unknown" and r["resource_type"] in ("JavaScript", "CSS")
    ]


def _key(name: str) -> Callable[[PageData], Rows]:
    """The rows of the page's part ``name`` (none when the page has no such part)."""

    def rows(data: PageData) -> Rows:
        part = data.get(name)
        return list(part) if isinstance(part, list) else []

    return rows


def _resources(data: PageData) -> list[ResourceRow]:
    """The resources of the resources view (:class:`~stacklens.performance.view_data.ResourcesData`)."""
    return cast("list[ResourceRow]", data["resources"])


WEEK = ("iso_week", "views", "load_avg", "load_p75", "prev_load_p75", "prev_views", "load_change_pct")
PAGE_COLUMNS = (
    "page",
    "views",
    "load_avg",
    "load_p75",
    "ttfb_avg",
    "ttfb_n",
    "dom_avg",
    "dom_n",
    "resource_avg",
    "resource_n",
    "api_calls_avg",
    "lcp_p75",
    "lcp_rating",
    "lcp_n",
    "inp_p75",
    "inp_rating",
    "inp_n",
    "cls_p75",
    "cls_rating",
    "cls_n",
    "score",
    "score_n",
    "opportunity",
)
DAY_COLUMNS = (
    "day",
    "views",
    "load_avg",
    "load_p75",
    "ttfb_p75",
    "ttfb_n",
    "dom_p75",
    "dom_n",
    "lcp_p75",
    "lcp_n",
    "inp_p75",
    "inp_n",
    "cls_p75",
    "cls_n",
    "fcp_p75",
    "fcp_n",
    "score",
    "score_n",
)
RESOURCE_TYPE_COLUMNS = (
    "resource_type",
    "requests",
    "loads",
    "total_bytes",
    "avg_transfer_bytes",
    "avg_bytes",
    "avg_decoded_bytes",
    "avg_ms",
    "p95_ms",
    "cache_hit_pct",
    "cache_samples",
    "compression_ratio",
)
ENDPOINT_COLUMNS = (
    "source",
    "method",
    "path",
    "calls",
    "avg_ms",
    "p95_ms",
    "s2xx",
    "s4xx",
    "s5xx",
    "error_pct",
)
RELEASE_COLUMNS = (
    "release",
    "first_seen",
    "views",
    "load_p75",
    "load_p75_change_pct",
    "js_bytes_per_view",
    "js_bytes_per_view_change_pct",
    "api_p95",
    "api_calls",
    "api_p95_change_pct",
    "api_error_pct",
    "error_events",
    "error_events_change_pct",
    "new_issues",
    "new_issues_change_pct",
    "previous_release",
    "regression",
)

PAGES: dict[str, tuple[Table, ...]] = {
    "overview": (
        Table(
            "vitals",
            "Web vitals",
            ("metric", "label", "value", "unit", "rating", "samples", "good_at_most", "poor_above"),
            _key("rows"),
        ),
        Table(
            "opportunities",
            "Pages with the most to gain",
            ("page", "views", "score", "score_n", "opportunity"),
            _key("opportunities"),
        ),
    ),
    "pages": (Table("pages", "Pages", PAGE_COLUMNS, _key("rows")),),
    "page_detail": (
        Table("days", "Each metric per day", DAY_COLUMNS, _key("rows")),
        Table("weeks", "Per ISO week", (*WEEK, "lcp_p75", "lcp_n", "score", "score_n"), _key("weeks")),
        Table(
            "samples", "Sample page loads", ("kind", "ts", "load_ms", "score", "event_id"), _key("samples")
        ),
    ),
    "resources": (
        Table("types", "Resource types", RESOURCE_TYPE_COLUMNS, _key("rows")),
        Table(
            "blocking",
            "Render-blocking resources",
            (
                "resource",
                "resource_type",
                "impact",
                "impact_reason",
                "blocking_loads",
                "non_blocking_loads",
                "unknown_loads",
                "avg_ms",
                "requests",
                "avg_bytes",
                "fcp_share",
            ),
            lambda data: blocking_resources(_resources(data)),
        ),
        Table(
            "largest",
            "Largest resources",
            (
                "resource",
                "resource_type",
                "render_blocking",
                "requests",
                "avg_bytes",
                "max_bytes",
                "avg_decoded_bytes",
                "avg_ms",
                "p95_ms",
                "cache_hit_pct",
                "third_party",
                "pages",
            ),
            lambda data: largest_resources(_resources(data)),
        ),
    ),
    "endpoints": (Table("endpoints", "API endpoints", ENDPOINT_COLUMNS, _key("rows")),),
    "endpoint_detail": (
        Table("days", "Per day", ("day", *ENDPOINT_COLUMNS[3:]), _key("rows")),
        Table(
            "slowest",
            "Slowest calls",
            ("ts", "duration_ms", "status_code", "description", "event_id"),
            _key("slowest"),
        ),
    ),
    "trends": (
        Table("weekly", "All pages per ISO week", WEEK, _key("rows")),
        Table(
            "pages",
            "Per page",
            ("key", *WEEK[:1], "views", "load_p75", "prev_load_p75", "prev_views", "load_change_pct"),
            _key("pages"),
        ),
    ),
    "releases": (Table("releases", "Release impact", RELEASE_COLUMNS, _key("rows")),),
    "recommendations": (
        Table(
            "recommendations",
            "Recommendations",
            (
                "severity",
                "rule",
                "rules",
                "subject",
                "message",
                "estimated_saving",
                "evidence",
                "pages",
                "old_release",
            ),
            _key("rows"),
        ),
    ),
}


# The table of each JSON API view: what its ``?format=csv`` answers (the page's download of the same table).
VIEW_TABLES: dict[str, tuple[str, str]] = {
    "overview": ("overview", "vitals"),
    "pages": ("pages", "pages"),
    "resources": ("resources", "types"),
    "endpoints": ("endpoints", "endpoints"),
    "trends": ("trends", "weekly"),
    "releases": ("releases", "releases"),
    "recommendations": ("recommendations", "recommendations"),
}

# View keys that hold a catalog metric without saying its unit: (metric, statistic) as the catalog names them.
METRIC_COLUMNS: dict[str, tuple[str, str | None]] = {
    "load_avg": ("load_time_ms", "avg"),
    "load_p75": ("load_time_ms", "p75"),
    "ttfb_avg": ("ttfb_ms", "avg"),
    "ttfb_p75": ("ttfb_ms", "p75"),
    "dom_avg": ("dom_ready_ms", "avg"),
    "dom_p75": ("dom_ready_ms", "p75"),
    "resource_avg": ("resource_time_ms", "avg"),
    "lcp_p75": ("lcp_ms", "p75"),
    "inp_p75": ("inp_ms", "p75"),
    "fcp_p75": ("fcp_ms", "p75"),
    "cls_p75": ("cls", "p75"),
    "js_bytes_per_view": ("js_bytes", None),
    "api_p95": ("api_ms", "p95"),
}
# A prefix naming the same metric of another row ("prev_load_p75": the previous week's).
COLUMN_PREFIXES = ("prev_",)


def csv_column(name: str) -> str:
    """The CSV name of a view column: the catalog's name with its unit for a metric column (``lcp_p75_ms``),
    the name itself for the rest."""
    for prefix in ("", *COLUMN_PREFIXES):
        if name.startswith(prefix) and name[len(prefix) :] in METRIC_COLUMNS:
            return prefix + column_name(*METRIC_COLUMNS[name[len(prefix) :]])
    return name


def view_table(view: str) -> Table:
    """The table a JSON API view's ``?format=csv`` answers; InvalidInput naming the view otherwise."""
    if view not in VIEW_TABLES:
        raise InvalidInput(f"view: must be one of {', '.join(VIEW_TABLES)}")
    return table(*VIEW_TABLES[view])


@dataclass(frozen=True)
class Target:
    """What a page is about beyond the filters: the endpoints' sort, the page route, the endpoint, whether the
    recommendations include those of old releases (a query value: ``1``, ``true`` …)."""

    sort: str = "calls"
    page: str = ""
    source: str = ""
    method: str = ""
    path: str = ""
    include_old_releases: str = ""


def page_data(
    page: str, client: Client, org_id: int, project_id: int, filters: ViewFilters, target: Target
) -> PageData:
    """The data a performance page renders: ``view_data.build`` for the views, the page and endpoint reads
    for the two detail pages. Raises InvalidInput naming the field for a missing or bad detail parameter."""
    if page not in PAGES:
        raise NotFound(f"no performance page {page!r}")
    if page == "page_detail":
        if not target.page:
            raise InvalidInput("page: choose a page (route) from the Pages table")
        days, weeks, _, samples = page_load_reads.page_detail(
            client, org_id, project_id, filters, target.page
        )
        return {
            "rows": days,
            "weeks": weeks,
            "samples": samples,
        }
    if page == "endpoint_detail":
        if target.source not in ("client", "server"):
            raise InvalidInput("source: must be client or server")
        if not target.method or not target.path:
            raise InvalidInput("method and path: choose an endpoint from the API endpoints table")
        endpoint_days, slowest = endpoint_reads.endpoint_detail(
            client, org_id, project_id, filters, target.source, target.method, target.path
        )
        return {"rows": endpoint_days, "slowest": slowest}
    try:
        include_old = flag("include_old_releases", target.include_old_releases)
        return view_data.build(page, client, org_id, project_id, filters, target.sort, include_old)
    except InvalidInput:
        raise
    except ValueError as exc:  # "sort must be one of …": the endpoints' sort is the one bad value left
        raise InvalidInput(str(exc).replace("sort must", "sort: must")) from exc


def table(page: str, name: str) -> Table:
    """One table of a page; InvalidInput naming ``table`` when the page has no such table."""
    for candidate in PAGES[page]:
        if candidate.name == name:
            return candidate
    names = ", ".join(t.name for t in PAGES[page])
    raise InvalidInput(f"table: {page} has the tables {names}")


def table_rows(spec: Table, data: PageData) -> list[dict[str, object]]:
    """The table's rows with exactly its columns (a key a row lacks is empty), values as JSON would carry
    them."""
    return [{column: plain(row.get(column)) for column in spec.columns} for row in spec.rows(data)]
