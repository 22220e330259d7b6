"""Budget definitions are validated field by field, and no data never counts as over budget."""

from __future__ import annotations

import pytest

from stacklens.performance.budget_rules import BUDGET_METRICS, BudgetError, passes, validate_budget


def test_a_valid_budget_is_cleaned() -> None:
    assert validate_budget(" lcp_ms ", "", "2500") == ("lcp_ms", "*", 2500.0)
    assert validate_budget("cls", " /checkout ", 0.1) == ("cls", "/checkout", 0.1)
    assert all(unit in ("ms", "bytes", "") for _, unit in BUDGET_METRICS.values())


@pytest.mark.parametrize(
    ("metric", "scope", "value", "message"),
    [
        ("fcp_ms", "*", 1, "unknown metric 'fcp_ms'"),
        ("lcp_ms", "checkout", 1, "scope must be"),
        ("lcp_ms", "/a b", 1, "scope must be"),
        ("lcp_ms", "*", "fast", "value must be a number"),
        ("lcp_ms", "*", -1, "finite number >= 0"),
        ("lcp_ms", "*", float("nan"), "finite number >= 0"),
        ("lcp_ms", "*", float("inf"), "finite number >= 0"),
    ],
)
def test_each_bad_field_is_named(metric: str, scope: str, value: object, message: str) -> None:
    with pytest.raises(BudgetError, match=message):
        validate_budget(metric, scope, value)


def test_passes() -> None:
    assert passes(None, 0) and passes(100, 100) and not passes(100.5, 100)
