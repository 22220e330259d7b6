"""The catalog's metrics of uptime checks, from their probes (warehouse table ``monitor_checks``);
:mod:`stacklens.metrics.catalog` holds them all, in order."""

from __future__ import annotations

from stacklens.metrics.definition import RAW_ROWS, Metric, State, Thresholds
from stacklens.metrics.units import COUNT, MS, PERCENT

_READERS = "monitor pages, Explore"

MONITOR_METRICS: tuple[Metric, ...] = (
    Metric(
        "uptime_pct",
        "Uptime",
        "Uptime",
        PERCENT,
        ("avg",),
        "avg",
        "Share of an uptime check's probes that answered the expected status, over a day or the window "
        "(docs/monitors.md).",
        "uptime",
        (State("monitor_checks", ("status",), RAW_ROWS, _READERS),),
        # 99.9 % is "three nines", a common SLA; under 99 % is over 7 hours down a month.
        thresholds=Thresholds(99.9, 99.0, "common service-level objectives", higher_is_better=True),
        decimals=3,
        fixed_statistic=True,
        budget=True,
        kind="monitor_checks",
        higher_is_better=True,
    ),
    Metric(
        "monitor_probes",
        "Uptime probes",
        "Probes",
        COUNT,
        ("count",),
        "count",
        "Probes of uptime checks (one request each).",
        "monitor_probes",
        (State("monitor_checks", ("timestamp",), RAW_ROWS, _READERS),),
        fixed_statistic=True,
        kind="monitor_checks",
    ),
    Metric(
        "probe_total_ms",
        "Probe response time",
        "Response time",
        MS,
        ("p50", "p75", "p95", "avg"),
        "p95",
        "Time from the start of an uptime probe to the end of its answer (connect, TLS, first byte, body).",
        "probe_total",
        (State("monitor_checks", ("total_ms",), RAW_ROWS, _READERS),),
        kind="monitor_checks",
    ),
)
