"""Every metric of the product, defined once: key, label, unit, the statistics it allows, the warehouse states
that hold it, its good / poor thresholds and how its values are written.

The performance views, budgets, alert rules, exports, the PDF, the CLI, ``GET /api/metrics`` and the metric table
of docs/performance.md take their names, units and formatting from here; the budget and rule definitions
(:mod:`stacklens.performance.budget_rules`, :mod:`stacklens.performance.metric_window`) are views of it.

Keys are the names budgets and alert rules have always used (``lcp_ms``, ``js_bytes``, ``api_p95_ms`` …): they
are stored in rules and budgets and sent by API clients, so they stay valid. ``aliases`` are the short names the
views' columns and the web-vital tables use (``lcp``, ``load``).
"""

from __future__ import annotations

from dataclasses import dataclass

from stacklens.metrics.statistics import STATISTICS, Statistic
from stacklens.metrics.units import BYTES, COUNT, MS, PERCENT, RATIO, SCORE, Unit

# How a state keeps a metric: what a value read from it can be trusted to.
LOG_HISTOGRAM = "log_histogram_1pct"  # 1 % log-histogram buckets: percentiles within QUANTILE_RELATIVE_ERROR
SUM_COUNT = "sum_count"  # sums and counts: exact averages, totals and counts
RAW_ROWS = "raw_rows"  # the raw table itself, read per request
UNIQ_STATES = "uniq_combined64"  # distinct-count states: exact up to ~128 distinct values, within ~2 % beyond


@dataclass(frozen=True)
class State:
    """A warehouse table (and its columns) that holds a metric, and who reads the metric from it."""

    table: str
    columns: tuple[str, ...]
    representation: str
    read_by: str

    @property
    def read_by_rules(self) -> bool:
        """Whether budgets and alert rules (and their previews) read the metric from this state."""
        return "alert rules" in self.read_by


@dataclass(frozen=True)
class Thresholds:
    """Good up to ``good`` and poor above ``poor`` (or, when higher is better, good from ``good`` and poor below
    ``poor``); ``source`` says whose bands they are."""

    good: float
    poor: float
    source: str
    higher_is_better: bool = False

    def rating(self, value: float | None) -> str:
        """good / needs improvement / poor; '' without a value."""
        if value is None:
            return ""
        if self.higher_is_better:
            return "good" if value >= self.good else ("needs improvement" if value >= self.poor else "poor")
        return "good" if value <= self.good else ("needs improvement" if value <= self.poor else "poor")


@dataclass(frozen=True)
class Metric:
    key: str
    label: str  # "Largest contentful paint (LCP)"
    short_label: str  # "LCP": table headers, axis titles
    unit: Unit
    statistics: tuple[str, ...]  # what budgets, rules and views may ask of it, in the catalog's order
    default_statistic: str
    description: str
    column_stem: str  # the start of its CSV column / axis names: "lcp" → lcp_p75_ms
    states: tuple[State, ...]
    thresholds: Thresholds | None = None
    aliases: tuple[str, ...] = ()
    decimals: int | None = None  # digits after the point when the unit's default does not suit
    fixed_statistic: bool = False  # the statistic is part of the metric (API p95, bytes per view, error %)
    budget: bool = False  # a budget can be set on it, and so an alert rule (stacklens.alerts.rules.METRICS)
    same_as: tuple[str, str] | None = None  # (metric, statistic) this key is another name for
    kind: str = "pageloads"  # the data it is computed from: pageloads, resources, api_calls, errors

    @property
    def statistic_objects(self) -> tuple[Statistic, ...]:
        return tuple(STATISTICS[s] for s in self.statistics)

    @property
    def error(self) -> float:
        """The largest relative error of a value the views read (0 = exact); percentiles from 1 % histograms."""
        histogram = any(s.representation == LOG_HISTOGRAM for s in self.states)
        return max((s.error for s in self.statistic_objects if histogram), default=0.0)


# Who reads a state (stacklens.performance.window_values reads for budgets, alert rules and their previews exactly
# what the views read, over the same windows).
_VIEWS = "performance views"
_RULES = "budgets and alert rules"
_ALL = "performance views, budgets and alert rules"
_TIMINGS = ("p50", "p75", "p95", "avg")
_VITALS = "Google web vitals"
_RELEASES = "release health, releases API"
# The one definition of an error rate of API calls (error_pct, and api_error_pct on the browser's side).
_API_ERRORS = (
    "Share of API calls answered with an HTTP 4xx or 5xx status, over all calls of the scope (calls without a "
    "status count in the denominator only)."
)


def _timing_states(prefix: str, views_count: str = "", read_by: str = _ALL) -> tuple[State, ...]:
    """A page-load timing's state: its count, its sum (none for the vitals: their average is the histogram's
    weighted mean) and its 1 % log histogram in `pageload_periods`."""
    count = views_count or f"{prefix}_n"
    sum_column = () if prefix in ("lcp", "inp", "cls", "fcp") else (f"{prefix}_sum",)
    return (State("pageload_periods", (count, *sum_column, f"{prefix}_hist"), LOG_HISTOGRAM, read_by),)


_METRICS: tuple[Metric, ...] = (
    Metric(
        "load_time_ms",
        "Page load time",
        "Load time",
        MS,
        _TIMINGS,
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
        _TIMINGS,
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
        _TIMINGS,
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
        _timing_states("inp"),
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
        _timing_states("dom", read_by=_VIEWS),
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
        (State("pageload_periods", ("resource_sum", "resource_n"), SUM_COUNT, _VIEWS),),
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
        (State("pageload_periods", ("score_sum", "score_n"), SUM_COUNT, _VIEWS),),
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
        (State("pageload_periods", ("views",), SUM_COUNT, _VIEWS),),
        aliases=("views",),
        fixed_statistic=True,
    ),
    Metric(
        "api_ms",
        "API response time",
        "API",
        MS,
        _TIMINGS,
        "p75",
        "Duration of server transactions (op http.server); the endpoints view adds the browser's API calls.",
        "api",
        (State("endpoint_call_periods", ("calls", "duration_sum", "dur_hist"), LOG_HISTOGRAM, _ALL),),
        aliases=("api",),
        budget=True,
        kind="api_calls",
    ),
    Metric(
        "api_p95_ms",
        "API response time p95",
        "API p95",
        MS,
        ("p95",),
        "p95",
        "The 95th percentile of the API response time (the same as api_ms with the statistic p95).",
        "api",
        (State("endpoint_call_periods", ("calls", "dur_hist"), LOG_HISTOGRAM, _RULES),),
        fixed_statistic=True,
        budget=True,
        same_as=("api_ms", "p95"),
        kind="api_calls",
    ),
    Metric(
        "api_calls",
        "API calls",
        "API calls",
        COUNT,
        ("count", "avg"),
        "count",
        "Calls to an endpoint (count), or browser API calls per page load (avg).",
        "api_calls",
        (
            State("endpoint_call_periods", ("calls",), SUM_COUNT, _VIEWS),
            State("pageload_periods", ("api_calls", "views"), SUM_COUNT, _VIEWS),
        ),
        decimals=0,
        kind="api_calls",
    ),
    Metric(
        "error_pct",
        "Error rate",
        "Error rate",
        PERCENT,
        ("avg",),
        "avg",
        _API_ERRORS + " Budgets and alert rules read the server side's calls (http.server transactions, the "
        "scope matching their route), as the endpoints view's server rows.",
        "error",
        (State("endpoint_call_periods", ("calls", "s4xx", "s5xx"), SUM_COUNT, _ALL),),
        fixed_statistic=True,
        budget=True,
        kind="api_calls",
    ),
    Metric(
        "api_error_pct",
        "API error rate (browser calls)",
        "API errors",
        PERCENT,
        ("avg",),
        "avg",
        _API_ERRORS
        + " Over the browser's API calls (http.client spans) of a release's page loads: error_pct "
        "of the client side.",
        "api_error",
        (State("pageload_periods", ("api_calls", "api_errors"), SUM_COUNT, "releases view"),),
        fixed_statistic=True,
        kind="api_calls",
    ),
    Metric(
        "failed_transactions_pct",
        "Failed transactions",
        "Failed transactions",
        PERCENT,
        ("avg",),
        "avg",
        "Transactions whose status is not ok, cancelled or unknown, or whose HTTP status is 500 or more, over all "
        "transactions (Sentry's failure rate): what an alert rule of type error_rate watches.",
        "failed_transactions",
        (State("transactions", ("status", "http_status"), RAW_ROWS, "alert rules of type error_rate"),),
        fixed_statistic=True,
        kind="transactions",
    ),
    Metric(
        "js_bytes",
        "JavaScript size per page view",
        "JavaScript",
        BYTES,
        ("avg",),
        "avg",
        "Bytes of JavaScript resources (encoded body size) per page view.",
        "js_per_view",
        (State("pageload_periods", ("js_bytes", "views"), SUM_COUNT, _ALL),),
        fixed_statistic=True,
        budget=True,
        kind="resources",
    ),
    Metric(
        "transfer_bytes",
        "Transfer size per page view",
        "Transfer size",
        BYTES,
        ("avg",),
        "avg",
        "Bytes of every resource of a page view (encoded body size), per page view.",
        "transfer_per_view",
        (
            State("pageload_periods", ("total_bytes", "views"), SUM_COUNT, _RULES),
            State("resource_request_periods", ("total_bytes", "transfer_bytes", "loads"), SUM_COUNT, _VIEWS),
        ),
        fixed_statistic=True,
        budget=True,
        kind="resources",
    ),
    Metric(
        "resource_duration_ms",
        "Resource load time",
        "Resource time",
        MS,
        ("p95", "avg"),
        "p95",
        "Duration of resource requests (resource spans).",
        "resource_duration",
        (State("resource_request_periods", ("requests", "duration_sum", "dur_hist"), LOG_HISTOGRAM, _VIEWS),),
        kind="resources",
    ),
    Metric(
        "resource_bytes",
        "Resource size",
        "Size",
        BYTES,
        ("avg", "sum", "max"),
        "avg",
        "Encoded body size of resource requests.",
        "resource_size",
        (
            State(
                "resource_request_periods",
                ("requests", "total_bytes", "max_bytes", "decoded_bytes"),
                SUM_COUNT,
                _VIEWS,
            ),
        ),
        kind="resources",
    ),
    Metric(
        "cache_hit_pct",
        "Cache hits",
        "Cache hits",
        PERCENT,
        ("avg",),
        "avg",
        "Share of resource requests answered from the cache (transfer size 0 with a body).",
        "cache_hit",
        (State("resource_request_periods", ("cache_hits", "requests"), SUM_COUNT, _VIEWS),),
        decimals=0,
        fixed_statistic=True,
        kind="resources",
    ),
    Metric(
        "compression_ratio",
        "Compression ratio",
        "Compression",
        RATIO,
        ("avg",),
        "avg",
        "Decoded bytes over encoded bytes of compressible resources (1.0 = not compressed).",
        "compression_ratio",
        (State("resource_request_periods", ("compressed_dec", "compressed_enc"), SUM_COUNT, _VIEWS),),
        fixed_statistic=True,
        kind="resources",
    ),
    Metric(
        "error_events",
        "Error events",
        "Errors",
        COUNT,
        ("count", "rate_per_1k"),
        "count",
        "Error events received; as a rate, per 1,000 page loads of the same window and filters.",
        "error_events",
        (
            State("events", ("event_id",), RAW_ROWS, "releases view, alert rules"),
            State("release_error_counts", ("events",), SUM_COUNT, "releases view"),
        ),
        kind="errors",
    ),
    Metric(
        "log_records",
        "Log records",
        "Logs",
        COUNT,
        ("count",),
        "count",
        "Log records received: OpenTelemetry log records and Sentry SDK logs (docs/logs.md).",
        "log_records",
        (State("logs", ("dedup_key",), RAW_ROWS, "logs view, Explore"),),
        fixed_statistic=True,
        kind="logs",
    ),
    *(
        # Release health (stacklens.releases, docs/releases.md): from the session states, per release and
        # environment; counted as Relay counts sessions.
        Metric(
            "crash_free_sessions",
            "Crash-free sessions",
            "Crash-free sessions",
            PERCENT,
            ("avg",),
            "avg",
            "Share of a release's sessions that did not end in a crash (abnormal sessions are not crashes).",
            "crash_free_sessions",
            (State("session_periods", ("sessions", "crashed"), SUM_COUNT, _RELEASES),),
            decimals=2,
            fixed_statistic=True,
            kind="sessions",
        ),
        Metric(
            "crash_free_users",
            "Crash-free users",
            "Crash-free users",
            PERCENT,
            ("avg",),
            "avg",
            "Share of a release's users (distinct user ids of its sessions) none of whose sessions crashed.",
            "crash_free_users",
            (State("session_periods", ("users", "crashed_users"), UNIQ_STATES, _RELEASES),),
            decimals=2,
            fixed_statistic=True,
            kind="sessions",
        ),
        Metric(
            "errored_sessions_pct",
            "Errored sessions",
            "Errored sessions",
            PERCENT,
            ("avg",),
            "avg",
            "Share of a release's sessions that saw an error: handled or not, crashed and abnormal ones included.",
            "errored_sessions",
            (State("session_periods", ("sessions", "errored"), SUM_COUNT, _RELEASES),),
            fixed_statistic=True,
            kind="sessions",
        ),
        Metric(
            "sessions",
            "Sessions",
            "Sessions",
            COUNT,
            ("count",),
            "count",
            "Sessions started: a browser page load or a server request as the SDKs count them.",
            "sessions",
            (State("session_periods", ("sessions",), SUM_COUNT, _RELEASES),),
            fixed_statistic=True,
            kind="sessions",
        ),
        Metric(
            "users",
            "Users",
            "Users",
            COUNT,
            ("count",),
            "count",
            "Distinct users (the SDKs' user ids) of the sessions; sessions without a user id count no user.",
            "users",
            (State("session_periods", ("users",), UNIQ_STATES, _RELEASES),),
            fixed_statistic=True,
            kind="sessions",
        ),
        Metric(
            "adoption",
            "Adoption",
            "Adoption",
            PERCENT,
            ("avg",),
            "avg",
            "Share of the environment's sessions of the last 24 hours that ran the release.",
            "adoption",
            (State("session_periods", ("sessions",), SUM_COUNT, _RELEASES),),
            fixed_statistic=True,
            kind="sessions",
        ),
        Metric(
            "errors_per_session",
            "Errors per session",
            "Errors per session",
            COUNT,
            ("avg",),
            "avg",
            "Error events of a release per session of the same window and environment.",
            "errors_per_session",
            (
                State("events", ("event_id",), RAW_ROWS, _RELEASES),
                State("session_periods", ("sessions",), SUM_COUNT, _RELEASES),
            ),
            decimals=2,
            fixed_statistic=True,
            kind="sessions",
        ),
    ),
)

CATALOG: dict[str, Metric] = {m.key: m for m in _METRICS}
ALIASES: dict[str, str] = {alias: m.key for m in _METRICS for alias in m.aliases}


class UnknownMetric(KeyError):
    """A key that is neither a metric nor an alias of one."""

    def __str__(self) -> str:
        return f"unknown metric {self.args[0]!r}; use one of {', '.join(CATALOG)}"


def get(key: str) -> Metric:
    """The metric of a key or alias; :class:`UnknownMetric` otherwise."""
    found = CATALOG.get(key) or CATALOG.get(ALIASES.get(key, ""))
    if found is None:
        raise UnknownMetric(key)
    return found


def find(key: str) -> Metric | None:
    """The metric of a key or alias, ``None`` for anything else."""
    return CATALOG.get(key) or CATALOG.get(ALIASES.get(key, ""))


def budget_metrics() -> dict[str, Metric]:
    """The metrics a budget can be set on, in the catalog's order."""
    return {k: m for k, m in CATALOG.items() if m.budget}


def web_vitals() -> dict[str, Metric]:
    """The five web vitals by their short name (``lcp`` …), in the performance score's order."""
    return {m.column_stem: m for m in (CATALOG[k] for k in ("lcp_ms", "inp_ms", "cls", "fcp_ms", "ttfb_ms"))}
