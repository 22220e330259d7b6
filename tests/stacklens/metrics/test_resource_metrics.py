"""The metrics of resource requests (stacklens/metrics/resource_metrics.py)."""

from __future__ import annotations

from stacklens.metrics.catalog import CATALOG
from stacklens.metrics.resource_metrics import RESOURCE_METRICS


def test_the_resource_metrics_are_computed_from_resource_requests_and_in_the_catalog() -> None:
    # One module per kind of data (stacklens/metrics/catalog.py): a metric of another kind is in the wrong
    # one.
    assert RESOURCE_METRICS and {m.kind for m in RESOURCE_METRICS} <= {"resources"}
    assert all(CATALOG[m.key] is m for m in RESOURCE_METRICS)
