"""Budget definitions are validated field by field (the message names the field), and no data or too few
samples is "insufficient data", never a pass."""

from __future__ import annotations

import pytest

from stacklens.performance.budget_eval import judge
from stacklens.performance.budget_rules import (
    BUDGET_METRICS,
    BudgetDefinition,
    BudgetError,
    scope_matches,
    validate_budget,
)


def test_a_valid_budget_is_cleaned_with_its_defaults() -> None:
    assert validate_budget(" lcp_ms ", "", "2500") == BudgetDefinition("lcp_ms", "*", 2500.0, "p75", 7, 20)
    assert validate_budget("load_time_ms", " /checkout ", 3000, "p95", "14d", "5") == BudgetDefinition(
        "load_time_ms", "/checkout", 3000.0, "p95", 14, 5
    )
    # The statistic of API p95, the byte budgets and error % is part of the metric.
    assert validate_budget("api_p95_ms", "*", 800, "p75").statistic == "p95"
    assert validate_budget("js_bytes", "*", 300_000).statistic == "avg"
    assert all(unit in ("ms", "bytes", "", "%") for _, unit in BUDGET_METRICS.values())
    # The ten budget metrics since budgets exist, and api_ms (every alert-rule metric can be budgeted).
    assert list(BUDGET_METRICS) == [
        "load_time_ms",
        "ttfb_ms",
        "fcp_ms",
        "lcp_ms",
        "inp_ms",
        "cls",
        # issue 69: the INP parts and the third parties' script time
        # (stacklens/metrics/interaction_metrics.py)
        "inp_input_delay_ms",
        "inp_processing_ms",
        "inp_presentation_ms",
        "inp_third_party_ms",
        "api_ms",
        "api_p95_ms",
        "error_pct",
        "js_bytes",
        "transfer_bytes",
        "uptime_pct",  # a floor: higher is better (issue 64)
    ]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"metric": "speed"}, "metric: unknown metric 'speed'"),
        ({"scope": "checkout"}, "scope: must be"),
        ({"scope": "/a b"}, "scope: must be"),
        ({"value": "fast"}, "value: must be a number"),
        ({"value": -1}, "value: must be a finite number >= 0"),
        ({"value": float("nan")}, "value: must be a finite number >= 0"),
        ({"value": float("inf")}, "value: must be a finite number >= 0"),
        ({"statistic": "p99"}, "statistic: unknown statistic 'p99'"),
        ({"metric": "lcp_ms", "statistic": "p95"}, "statistic: lcp_ms keeps p75"),
        ({"window_days": 0}, "window: must be a whole number from 1 to 30"),
        ({"window_days": "soon"}, "window: must be a whole number"),
        ({"min_samples": 0}, "min_samples: must be a whole number from 1"),
        ({"scope": "/nowhere/*", "pages_seen": ["/", "/checkout"]}, "scope: '/nowhere/\\*' matches no page"),
    ],
)
def test_each_bad_field_is_named(kwargs: dict, message: str) -> None:
    args = {"metric": "load_time_ms", "scope": "*", "value": 1, **kwargs}
    with pytest.raises(BudgetError, match=message):
        validate_budget(**args)


def test_route_patterns_match_pages_seen() -> None:
    seen = ["/products/12", "/checkout"]
    assert validate_budget("lcp_ms", "/products/*", 1, pages_seen=seen).scope == "/products/*"
    assert scope_matches("*", "/anything") and scope_matches("/checkout", "/checkout")
    assert not scope_matches("/checkout", "/checkout/done") and not scope_matches("/a[", "/a")


def test_no_data_or_too_few_samples_is_insufficient_never_a_pass() -> None:
    assert judge(None, 0, 100, 1) == "insufficient_data"
    assert judge(50, 19, 100, 20) == "insufficient_data"
    assert judge(100, 20, 100, 20) == "pass"
    assert judge(100.5, 20, 100, 20) == "fail"
