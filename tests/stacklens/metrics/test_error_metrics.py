"""The metrics of error events and log records (stacklens/metrics/error_metrics.py)."""

from __future__ import annotations

from stacklens.metrics.catalog import CATALOG
from stacklens.metrics.error_metrics import ERROR_METRICS


def test_the_error_metrics_are_computed_from_error_events_and_log_records_and_in_the_catalog() -> None:
    # One module per kind of data (stacklens/metrics/catalog.py): a metric of another kind is in the wrong
    # one.
    assert ERROR_METRICS and {m.kind for m in ERROR_METRICS} <= {"errors", "logs"}
    assert all(CATALOG[m.key] is m for m in ERROR_METRICS)
