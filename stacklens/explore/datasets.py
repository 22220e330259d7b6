"""The datasets Explore queries (DESIGN §8.2): which raw table(s) each reads, its time column, the fields it can be
filtered and grouped by (with their types), its tags map and the metrics of the catalog it holds.

Every SQL fragment here is a fixed string of this module: a query names fields and metrics by key, and only the
fragment of a key found here reaches the engine (:mod:`stacklens.explore.sql`). Explore reads the raw tables —
the same rows the pipelines build the views' states from — so any filter and group-by of any column is exact and
fresh, without waiting for a pipeline run. ``sessions`` and ``logs`` join once their tables exist.
"""

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
class Source:
    """One table of a dataset: its rows, the condition that selects the dataset's rows in it, and the expression
    of every field, metric value (``m_<metric>``) and special column (``ts``, ``user``, ``tags``: a source
    without a tags map reads every tag as '') over it."""

    table: str
    condition: str
    columns: dict[str, str]


@dataclass(frozen=True)
class Dataset:
    key: str
    label: str
    fields: dict[str, Field]
    metrics: tuple[str, ...]  # catalog keys whose values it holds (column ``m_<key>`` of every source)
    counted: str  # the catalog metric a plain count of its rows is (page_loads, error_events, …)
    sources: tuple[Source, ...] = field(default=())


def _fields(*items: tuple[str, str, str]) -> dict[str, Field]:
    return {key: Field(key, kind, text) for key, kind, text in items}


def _measurement(name: str) -> str:
    # NULL when the browser did not report it: an absent vital is not a 0 ms vital.
    return f"if(mapContains(measurements, '{name}'), measurements['{name}'], NULL)"


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
    (
        Source(
            "events",
            "1",
            {
                "ts": "timestamp",
                "user": "user_key",
                "tags": "tags",
                "environment": "environment",
                "release": "release",
                "level": "level",
                "platform": "platform",
                "browser": "browser_name",
                "os": "os_name",
                "transaction": "transaction",
                "exception_type": "exception_type",
                "logger": "logger",
                "server_name": "server_name",
                "service": "service",
                "url": "request_url",
                "handled": "toFloat64(handled)",
                "issue_id": "toFloat64(issue_id)",
                "m_error_events": "1",
            },
        ),
    ),
)

_VITALS = {
    "m_ttfb_ms": _measurement("ttfb"),
    "m_fcp_ms": _measurement("fcp"),
    "m_lcp_ms": _measurement("lcp"),
    "m_inp_ms": _measurement("inp"),
    "m_cls": _measurement("cls"),
    "m_dom_ready_ms": _measurement("dom_ready"),
}

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
    (
        Source(
            "transactions",
            "op = 'pageload'",
            {
                "ts": "timestamp",
                "user": "user_key",
                "tags": "tags",
                "environment": "environment",
                "release": "release",
                "page": "page",
                "browser": "browser_name",
                "os": "os_name",
                "transaction": "transaction",
                "url": "url",
                "status": "status",
                "http_status": "toFloat64(http_status)",
                "m_page_loads": "1",
                "m_load_time_ms": "duration_ms",
                **_VITALS,
            },
        ),
    ),
)

RESOURCES = Dataset(
    "resources",
    "Resource requests",
    _fields(
        *_COMMON,
        ("page", STRING, "the page load's route"),
        ("op", STRING, "resource.script, resource.css, resource.img, …"),
        ("resource", STRING, "resource URL"),
        ("render_blocking", STRING, "blocking, non-blocking or ''"),
        ("status_code", NUMBER, "HTTP status"),
    ),
    ("resource_duration_ms", "resource_bytes"),
    "resource_duration_ms",
    (
        Source(
            "spans",
            "op LIKE 'resource.%'",
            {
                "ts": "timestamp",
                "user": "''",
                "environment": "environment",
                "release": "release",
                "page": "page",
                "op": "op",
                "resource": "description",
                "render_blocking": "render_blocking_status",
                "status_code": "toFloat64(status_code)",
                "m_resource_duration_ms": "duration_ms",
                # What the resource views count as a request's size: encoded body, else transfer size.
                "m_resource_bytes": "toFloat64(coalesce(response_content_length, transfer_size, 0))",
            },
        ),
    ),
)

API_CALLS = Dataset(
    "api_calls",
    "API calls (client and server)",
    _fields(
        *_COMMON,
        ("source", STRING, "server (http.server transactions) or client (the browser's http.client spans)"),
        ("method", STRING, "HTTP method"),
        ("endpoint", STRING, "server: transaction name; client: the call's description"),
        ("page", STRING, "calling page (client calls)"),
        ("status_code", NUMBER, "HTTP status"),
    ),
    ("api_ms",),
    "api_calls",
    (
        Source(
            "transactions",
            "op = 'http.server'",
            {
                "ts": "timestamp",
                "user": "user_key",
                "tags": "tags",
                "environment": "environment",
                "release": "release",
                "source": "'server'",
                "method": "toString(http_method)",
                "endpoint": "transaction",
                "page": "page",
                "status_code": "toFloat64(http_status)",
                "m_api_ms": "duration_ms",
            },
        ),
        Source(
            "spans",
            "op = 'http.client'",
            {
                "ts": "timestamp",
                "user": "''",
                "environment": "environment",
                "release": "release",
                "source": "'client'",
                "method": "toString(http_method)",
                "endpoint": "description",
                "page": "page",
                "status_code": "toFloat64(status_code)",
                "m_api_ms": "duration_ms",
            },
        ),
    ),
)

DATASETS: dict[str, Dataset] = {d.key: d for d in (ERRORS, PAGELOADS, RESOURCES, API_CALLS)}
