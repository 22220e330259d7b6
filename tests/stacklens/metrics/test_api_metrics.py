"""The API-call metrics: one definition of the error rate (stacklens/metrics/api_metrics.py)."""

from __future__ import annotations

from stacklens.alerts import rule_types
from stacklens.metrics.api_metrics import API_METRICS
from stacklens.metrics.catalog import CATALOG


def test_the_error_rate_has_one_definition_and_no_other_metric_is_called_so() -> None:
    # error_pct (endpoints view, budgets, rules) and api_error_pct (the releases view's browser calls) are one
    # definition over the API-call states; the error_rate rule type watches failed transactions, named so.
    labels = [m.label for m in CATALOG.values()]
    assert len(labels) == len(set(labels))
    assert {k for k, m in CATALOG.items() if "error rate" in m.label.lower()} == {
        "error_pct",
        "api_error_pct",
    }
    definition = (
        "Share of API calls answered with an HTTP 4xx or 5xx status, over all calls of the scope (calls without a "
        "status count in the denominator only)."
    )
    assert CATALOG["error_pct"].description.startswith(definition)
    assert CATALOG["api_error_pct"].description.startswith(definition)
    assert [(s.table, s.read_by_rules) for s in CATALOG["error_pct"].states] == [
        ("endpoint_call_periods", True)
    ]
    assert {"s4xx", "s5xx", "calls"} <= set(CATALOG["error_pct"].states[0].columns)
    assert [s.columns for s in CATALOG["api_error_pct"].states] == [("api_calls", "api_errors")]
    failed = CATALOG["failed_transactions_pct"]
    assert failed.label == rule_types.TYPE_LABELS["error_rate"] == "Failed transactions" and not failed.budget
    assert not any("error rate" in label.lower() for label in rule_types.TYPE_LABELS.values())


def test_the_api_metrics_are_computed_from_api_calls_and_transactions_and_in_the_catalog() -> None:
    # One module per kind of data (stacklens/metrics/catalog.py): a metric of another kind is in the wrong
    # one.
    assert API_METRICS and {m.kind for m in API_METRICS} <= {"api_calls", "transactions"}
    assert all(CATALOG[m.key] is m for m in API_METRICS)
