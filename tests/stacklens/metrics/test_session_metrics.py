"""The metrics of sessions (stacklens/metrics/session_metrics.py)."""

from __future__ import annotations

from stacklens.metrics.catalog import CATALOG
from stacklens.metrics.session_metrics import SESSION_METRICS


def test_the_session_metrics_are_computed_from_sessions_and_in_the_catalog() -> None:
    # One module per kind of data (stacklens/metrics/catalog.py): a metric of another kind is in the wrong
    # one.
    assert SESSION_METRICS and {m.kind for m in SESSION_METRICS} <= {"sessions"}
    assert all(CATALOG[m.key] is m for m in SESSION_METRICS)
