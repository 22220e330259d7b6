"""Links into Explore (`/orgs/{org}/explore?…`) with the query filled in: from each performance page (its
window, filters and main figure), from an issue's tags and from a release.

A link carries the page's resolved window (``since``/``until``, not ``range``): Explore then reads the same
rows the page read, so the same metric shows the same value (counts and averages exactly, percentiles
within the catalog's error: the views read 1 % histograms). The page's query string is the API's JSON body
in URL form: ``dataset``, ``project``, ``range`` or ``since``/``until``, ``f=field|op|value`` (repeated),
``g=field`` (repeated), ``a=fn:metric`` (repeated), ``interval``, ``order``, ``limit``."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from functools import lru_cache
from typing import Any
from urllib.parse import quote_plus

from stacklens.explore.datasets import DATASETS
from stacklens.explore.query import MAX_VALUE_LENGTH, TAG_KEY
from stacklens.view_filters import ViewFilters

EXPLORE = "/orgs/{org_slug}/explore"
PERF_FILTERS = ("environment", "release", "browser")


def params_from_body(body: dict[str, Any]) -> list[tuple[str, str]]:
    """The page's query string of a query body (a saved query's link, a shared URL)."""
    pairs: list[tuple[str, str]] = [
        ("dataset", body.get("dataset", "")),
        ("project", body.get("project", "")),
    ]
    for key in ("range", "since", "until", "interval"):
        if body.get(key):
            pairs.append((key, str(body[key])))
    for f in body.get("filters", []):
        value = ",".join(map(str, f["value"])) if isinstance(f["value"], list) else str(f["value"])
        pairs.append(("f", f"{f['field']}|{f['op']}|{value}"))
    pairs += [("g", g) for g in body.get("group_by", [])]
    pairs += [("a", f"{a['fn']}:{a.get('metric') or ''}") for a in body.get("aggregates", [])]
    compare = body.get("compare") or {}
    if compare.get("previous_release"):
        pairs.append(("compare", "release"))
    elif compare.get("previous_period"):
        pairs.append(("compare", "previous"))
    elif compare.get("since"):
        pairs += [("compare_since", str(compare["since"])), ("compare_until", str(compare.get("until", "")))]
    if body.get("order_by"):
        pairs.append(("order", str(body["order_by"])))
    if body.get("limit"):
        pairs.append(("limit", str(body["limit"])))
    return pairs


@lru_cache(maxsize=8192)
def _pair(key: str, value: str) -> str:
    """``key=value`` quoted as :func:`urllib.parse.urlencode` quotes it, kept: a dashboard's drill-down links
    (dashboards.widget_drill, ~160 a view of the demo's) repeat the same dataset, aggregates, filters and
    buckets, and quoting them anew cost ~3 of the 36 ms of CPU of a warm dashboard render."""
    return quote_plus(key) + "=" + quote_plus(value)


def query_string(pairs: list[tuple[str, str]]) -> str:
    """``urlencode(pairs)``, each pair quoted once per process (:func:`_pair`)."""
    return "&".join(_pair(str(k), str(v)) for k, v in pairs)


def explore_url(org_slug: str, body: dict[str, Any]) -> str:
    return EXPLORE.format(org_slug=org_slug) + "?" + query_string(params_from_body(body))


def download_url(org_slug: str, body: dict[str, Any], title: str, window: str, fmt: str = "csv") -> str:
    """A widget's download (Explore's, every row) named after the widget and the window: ``window`` (the
    dashboard's range) replaces the body's resolved ``since``/``until``, so the file reads ``…-30d.csv``."""
    named = {k: v for k, v in body.items() if k not in ("since", "until", "limit")}
    named["range"] = window
    path = EXPLORE.format(org_slug=org_slug) + f"/download.{fmt}"
    return path + "?" + query_string([*params_from_body(named), ("name", title)])


def _iso(value: datetime) -> str:
    return value.isoformat().replace("+00:00", "Z")


@dataclass(frozen=True)
class Spec:
    """What a page's main figure is, as an Explore query: its dataset, groups, aggregates and interval."""

    dataset: str
    aggregates: tuple[str, ...]  # fn:metric
    group_by: tuple[str, ...] = ()
    interval: str = "1d"
    order_by: str = ""


_VITALS = ("p75:lcp_ms", "p75:inp_ms", "p75:cls", "p75:fcp_ms", "p75:ttfb_ms")
PERFORMANCE: dict[str, Spec] = {
    "overview": Spec("pageloads", ("count:", *_VITALS, "p75:load_time_ms")),
    "pages": Spec("pageloads", ("count:", "p75:load_time_ms", "avg:load_time_ms", "p75:lcp_ms"), ("page",)),
    "page_detail": Spec(
        "pageloads",
        ("count:", "p75:load_time_ms", "p75:ttfb_ms", "p75:dom_ready_ms", *_VITALS[:4]),
    ),
    "resources": Spec(
        "resources",
        (
            "count:",
            "avg:resource_duration_ms",
            "p95:resource_duration_ms",
            "sum:resource_bytes",
            "avg:resource_bytes",
        ),
        ("resource_type",),
        "",
    ),
    "endpoints": Spec("api_calls", ("count:", "avg:api_ms", "p95:api_ms"), ("source", "method", "path"), ""),
    "endpoint_detail": Spec("api_calls", ("count:", "avg:api_ms", "p95:api_ms")),
    "trends": Spec("pageloads", ("count:", "avg:load_time_ms", "p75:load_time_ms"), (), "1w"),
    "releases": Spec("pageloads", ("count:", "p75:load_time_ms", "p75:lcp_ms"), ("release",)),
}
# What a detail page is about, as filters of the dataset.
TARGET_FIELDS = {"page": "page", "source": "source", "method": "method", "path": "path"}


@dataclass(frozen=True)
class Link:
    href: str
    note: str = ""  # what the link cannot carry over (a filter the dataset has no field for)


def query_body(
    spec: Spec, project: str, filters: ViewFilters, extra: dict[str, str] | None = None
) -> tuple[dict[str, Any], list[str]]:
    """``(body, filters left out)``: the query of ``spec`` over the page's window and filters."""
    dataset = DATASETS[spec.dataset]
    wanted = {k: getattr(filters, k) for k in PERF_FILTERS if getattr(filters, k)}
    wanted.update({TARGET_FIELDS.get(k, k): v for k, v in (extra or {}).items() if v})
    kept = {k: v for k, v in wanted.items() if k in dataset.fields}
    body: dict[str, Any] = {
        "dataset": spec.dataset,
        "project": project,
        "since": _iso(filters.since),
        "until": _iso(filters.until),
        "filters": [{"field": k, "op": "=", "value": v} for k, v in kept.items()],
        "group_by": list(spec.group_by),
        "aggregates": [dict(zip(("fn", "metric"), a.split(":", 1), strict=True)) for a in spec.aggregates],
        "interval": spec.interval,
        "order_by": spec.order_by,
    }
    return body, [k for k in wanted if k not in kept]


def performance_link(
    org_slug: str, project: str, page: str, filters: ViewFilters, target: dict[str, str]
) -> Link | None:
    """ "Open in Explore" of a performance page (``page``: its export name); ``None`` for a page without
    one."""
    spec = PERFORMANCE.get(page)
    if spec is None:
        return None
    body, left_out = query_body(
        spec, project, filters, {k: v for k, v in target.items() if k in TARGET_FIELDS}
    )
    note = f"Explore has no {', '.join(left_out)} field for this data: not filtered by it" if left_out else ""
    return Link(explore_url(org_slug, body), note)


def release_links(org_slug: str, project: str, release: str, filters: ViewFilters) -> dict[str, str]:
    """A release's page loads by day and its error events by day, in the page's window."""
    scoped = replace(filters, release=release)
    loads, _ = query_body(Spec("pageloads", ("count:", "p75:load_time_ms", "p75:lcp_ms")), project, scoped)
    errors, _ = query_body(Spec("errors", ("count:", "unique_users:", "rate_per_1k:")), project, scoped)
    return {"pageloads": explore_url(org_slug, loads), "errors": explore_url(org_slug, errors)}


def release_health_link(
    org_slug: str, project: str, release: str, environment: str, since: datetime, until: datetime
) -> str:
    """A release's sessions per day in Explore: sessions, users, crash-free sessions and users, errored
    sessions (the release pages' figures, from the raw sessions)."""
    window = ViewFilters(since, until)
    filters = [{"field": "release", "op": "=", "value": release}]
    if environment:
        filters.append({"field": "environment", "op": "=", "value": environment})
    body = {
        "dataset": "sessions",
        "project": project,
        "since": _iso(window.since),
        "until": _iso(window.until),
        "filters": filters,
        "group_by": [],
        "aggregates": [
            {"fn": "count"},
            {"fn": "count", "metric": "users"},
            {"fn": "avg", "metric": "crash_free_sessions"},
            {"fn": "avg", "metric": "crash_free_users"},
            {"fn": "avg", "metric": "errored_sessions_pct"},
        ],
        "interval": "1d",
    }
    return explore_url(org_slug, body)


# Tags an event shows from its own columns rather than its tags map: the field of the errors dataset to
# filter.
EVENT_FIELDS = {"environment": "environment", "release": "release", "server_name": "server_name"}


def issue_tag_link(
    org_slug: str,
    project: str,
    issue_id: int,
    key: str,
    value: str,
    row: dict[str, Any],
    since: datetime,
    until: datetime,
) -> str | None:
    """The issue's events with this tag (``tag:key=value``; a tag from the event's own columns as that field),
    counted per day with the users they reached, in the issue page's window; ``None`` for a tag Explore cannot
    name (a key outside letters, digits, ``_ . : -``, or a value longer than a filter takes)."""
    if len(value) > MAX_VALUE_LENGTH or any(ord(ch) < 32 for ch in value):
        return None
    if key in EVENT_FIELDS:
        condition = {"field": EVENT_FIELDS[key], "op": "=", "value": value}
    elif key in ("browser", "os") and row.get(f"{key}_name"):
        # The page writes name and version ("Chrome 126.0"); the events keep the name in a column.
        condition = {"field": key, "op": "=", "value": str(row[f"{key}_name"])}
    elif TAG_KEY.fullmatch(key):
        condition = {"field": f"tag:{key}", "op": "=", "value": value}
    else:
        return None
    window = ViewFilters(since, until)  # whole minutes, as Explore reads a window
    body = {
        "dataset": "errors",
        "project": project,
        "since": _iso(window.since),
        "until": _iso(window.until),
        "filters": [{"field": "issue_id", "op": "=", "value": str(issue_id)}, condition],
        "group_by": [],
        "aggregates": [{"fn": "count"}, {"fn": "unique_users"}],
        "interval": "1d",
    }
    return explore_url(org_slug, body)
