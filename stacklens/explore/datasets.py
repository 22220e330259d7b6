"""The datasets Explore queries (docs/reference.md): the fields each can be filtered and grouped by (with
their
types) and the metrics of the catalog it holds.

A dataset's rows are a named query, ``warehouse_sql/queries/explore/<key>.sql``: it reads the raw table(s)
— the same rows the pipelines build the views' facts and states from (page loads: op ``pageload``
transactions; API calls: what ``endpoint_facts`` holds; resources: what ``resource_facts`` holds), so any
filter and group-by of any column works and is fresh without waiting for a pipeline run — scoped to the
organization, its projects and the window, and names its columns ``ts`` (the row's time), ``uid`` (who
"unique users" counts; '' when the rows carry no user), ``tags`` (an empty map when they carry none),
``f_<field>`` for each field below, ``m_<metric>`` for each metric (or the columns its :class:`Measure`
reads) and ``h_<metric>`` for each metric the views keep in a 1 % log histogram
(:attr:`Dataset.histograms`): the value as the histogram keeps it, what Explore's percentiles are taken
over. A query names fields and metrics by key, and only keys found here reach :mod:`stacklens.explore.sql`."""

from __future__ import annotations

from dataclasses import dataclass, field

STRING = "string"
NUMBER = "number"


@dataclass(frozen=True)
class Field:
    key: str
    type: str  # STRING or NUMBER
    description: str


@dataclass(frozen=True)
class Measure:
    """A metric that is not one value per row but a count or share over the rows (a session's updates count it
    once): the engine's aggregate of it over the dataset's columns, and of the count it summarises."""

    sql: str
    samples: str


@dataclass(frozen=True)
class Dataset:
    key: str  # also the name of its rows' query: queries/explore/<key>.sql
    label: str
    fields: dict[str, Field]
    metrics: tuple[str, ...]  # catalog keys whose values it holds (column ``m_<key>``, or a measure)
    counted: str  # the catalog metric a plain count of its rows is (page_loads, error_events, …)
    measures: dict[str, Measure] = field(default_factory=dict)
    extra_columns: tuple[str, ...] = ()  # columns of its rows the measures read
    # Metrics the views' states keep as 1 % log histograms: the rows also hold ``h_<metric>``, the value as
    # the histogram keeps it (the value of its bucket), and Explore's percentiles are taken over it.
    histograms: tuple[str, ...] = ()
    # Whether the ``h_<metric>`` columns are stored (page loads: migration 0015) rather than computed per row:
    # a count of a metric's values then reads them too, so a p75 and its count read one column, not two.
    stored_histograms: bool = False

    @property
    def rows_query(self) -> str:
        return f"explore/{self.key}"


def _fields(*items: tuple[str, str, str]) -> dict[str, Field]:
    return {key: Field(key, kind, text) for key, kind, text in items}


_COMMON = (
    ("environment", STRING, "deployment environment"),
    ("release", STRING, "release version"),
)

ERRORS = Dataset(
    "errors",
    "Error events",
    _fields(
        *_COMMON,
        ("level", STRING, "error, warning, fatal, …"),
        ("platform", STRING, "SDK platform"),
        ("browser", STRING, "browser name"),
        ("os", STRING, "operating system"),
        ("transaction", STRING, "transaction / route of the event"),
        ("exception_type", STRING, "the raised exception's type"),
        ("logger", STRING, "logger name"),
        ("server_name", STRING, "host that sent the event"),
        ("service", STRING, "service name"),
        ("url", STRING, "request URL"),
        ("handled", NUMBER, "1 when handled, 0 when not"),
        ("issue_id", NUMBER, "the issue the event belongs to"),
    ),
    ("error_events",),
    "error_events",
)

PAGELOADS = Dataset(
    "pageloads",
    "Page loads",
    _fields(
        *_COMMON,
        ("page", STRING, "normalised route"),
        ("browser", STRING, "browser name"),
        ("os", STRING, "operating system"),
        ("transaction", STRING, "transaction name"),
        ("url", STRING, "URL"),
        ("status", STRING, "transaction status"),
        ("http_status", NUMBER, "HTTP status of the document"),
    ),
    ("page_loads", "load_time_ms", "ttfb_ms", "fcp_ms", "lcp_ms", "inp_ms", "cls", "dom_ready_ms"),
    "page_loads",
    histograms=("load_time_ms", "ttfb_ms", "fcp_ms", "lcp_ms", "inp_ms", "cls", "dom_ready_ms"),
    stored_histograms=True,
)

RESOURCES = Dataset(
    "resources",
    "Resource requests",
    _fields(
        *_COMMON,
        ("page", STRING, "the page load's route"),
        ("op", STRING, "resource.script, resource.css, resource.img, …, or http.client (a browser API call)"),
        (
            "resource_type",
            STRING,
            "JavaScript, CSS, Images, Fonts, API or Other, as the resources view sorts them",
        ),
        ("resource", STRING, "resource URL without query and fragment, as the resources view names it"),
        ("render_blocking", STRING, "blocking, non-blocking or ''"),
        ("status_code", NUMBER, "HTTP status"),
    ),
    ("resource_duration_ms", "resource_bytes"),
    "resource_duration_ms",
    histograms=("resource_duration_ms",),
)

API_CALLS = Dataset(
    "api_calls",
    "API calls (client and server)",
    _fields(
        *_COMMON,
        ("source", STRING, "server (http.server transactions) or client (the browser's http.client spans)"),
        ("method", STRING, "HTTP method"),
        ("path", STRING, "the endpoint view's path: the server's route, the client call's with ids folded"),
        ("endpoint", STRING, "server: transaction name; client: the call's description"),
        ("page", STRING, "calling page (client calls)"),
        ("status_code", NUMBER, "HTTP status"),
    ),
    ("api_ms",),
    "api_calls",
    histograms=("api_ms",),
)

# Release health, counted as the release pages count it (pipelines' session_periods_minute.sql, Relay's
# metrics extraction): a session update counts its session once (its id), an aggregate row (`sessions` item,
# nil id) counts its quantity; errored = errors seen or an error status (crashed and abnormal included).
_SESSIONS = (
    "uniqExactIf(s_session, s_init = 1 AND NOT s_aggregate) + sumIf(s_quantity, s_init = 1 AND s_aggregate)"
)
_CRASHED = (
    "uniqExactIf(s_session, f_status = 'crashed' AND NOT s_aggregate)"
    " + sumIf(s_quantity, f_status = 'crashed' AND s_aggregate)"
)
_ERRORED = "uniqExactIf(s_session, s_bad AND NOT s_aggregate) + sumIf(s_quantity, s_bad AND s_aggregate)"
_USERS = "uniqExactIf(uid, uid != '')"
SESSIONS = Dataset(
    "sessions",
    "Sessions (release health)",
    _fields(
        *_COMMON,
        ("status", STRING, "the update's status: ok, exited, errored, crashed, abnormal, unhandled"),
        ("source", STRING, "session (one session's updates) or sessions (an SDK's aggregate buckets)"),
    ),
    ("sessions", "users", "crash_free_sessions", "crash_free_users", "errored_sessions_pct"),
    "sessions",
    {
        "sessions": Measure(_SESSIONS, _SESSIONS),
        "users": Measure(_USERS, _USERS),
        "crash_free_sessions": Measure(f"100 * (1 - ({_CRASHED}) / nullIf({_SESSIONS}, 0))", _SESSIONS),
        "crash_free_users": Measure(
            f"100 * (1 - uniqExactIf(uid, uid != '' AND f_status = 'crashed') / nullIf({_USERS}, 0))", _USERS
        ),
        "errored_sessions_pct": Measure(f"100 * ({_ERRORED}) / nullIf({_SESSIONS}, 0)", _SESSIONS),
    },
    ("s_session", "s_aggregate", "s_init", "s_quantity", "s_bad"),
)

# Log records (docs/logs.md): counted; their attributes are the tags (`tag:<attribute>`).
LOGS = Dataset(
    "logs",
    "Log records",
    _fields(
        *_COMMON,
        ("severity", STRING, "trace, debug, info, warn, error, fatal or '' (unspecified)"),
        ("severity_number", NUMBER, "1–24 (OpenTelemetry's severity number); 0 unspecified"),
        ("service", STRING, "service name"),
        ("body", STRING, "the log message"),
        ("trace_id", STRING, "the record's trace (32 hex digits) or ''"),
        ("source", STRING, "otlp (OpenTelemetry) or sentry (a Sentry SDK)"),
    ),
    (),
    "log_records",
)

# Uptime probes (docs/monitors.md): one row per probe of an uptime check; uptime % is the share that was ok.
MONITOR_CHECKS = Dataset(
    "monitor_checks",
    "Uptime probes",
    _fields(
        ("monitor", STRING, "the uptime monitor's slug"),
        ("status", STRING, "ok or down"),
        ("http_code", NUMBER, "the answer's HTTP status (0: no answer)"),
        ("tls_days_left", NUMBER, "days of validity left on the server's TLS certificate"),
    ),
    ("uptime_pct", "probe_total_ms"),
    "monitor_probes",
    {"uptime_pct": Measure("100 * countIf(f_status = 'ok') / nullIf(count(), 0)", "count()")},
)

# Interactions (docs/performance.md, "INP causes"): one row per reported interaction with its INP parts and
# its third parties' script time (table inp_interactions), as the INP view reads them: percentiles over the
# values as the INP states' 1 % log histograms keep them.
INTERACTIONS = Dataset(
    "interactions",
    "Interactions (INP)",
    _fields(
        *_COMMON,
        ("browser", STRING, "browser name"),
        ("page", STRING, "the page's route"),
        ("target", STRING, "the element's CSS path"),
        ("type", STRING, "click, press, …"),
    ),
    ("inp_input_delay_ms", "inp_processing_ms", "inp_presentation_ms", "inp_third_party_ms"),
    "inp_interactions",
    histograms=("inp_input_delay_ms", "inp_processing_ms", "inp_presentation_ms", "inp_third_party_ms"),
)

DATASETS: dict[str, Dataset] = {
    d.key: d for d in (ERRORS, PAGELOADS, RESOURCES, API_CALLS, SESSIONS, LOGS, MONITOR_CHECKS, INTERACTIONS)
}
