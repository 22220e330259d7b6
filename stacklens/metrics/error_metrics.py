"""The catalog's metrics of error events and log records, counted from their tables;
:mod:`stacklens.metrics.catalog` holds them all, in order."""

from __future__ import annotations

from stacklens.metrics.definition import (
    RAW_ROWS,
    SUM_COUNT,
    Metric,
    State,
)
from stacklens.metrics.units import COUNT

ERROR_METRICS: tuple[Metric, ...] = (
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
)
