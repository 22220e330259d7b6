"""The call budgets: a token's calls per minute and an organization's calls at once, each refusal naming
its budget, its limit and when to retry; another organization is not held back."""

from __future__ import annotations

import pytest

from stacklens.agents import budget


def test_rate_budget_names_itself() -> None:
    limits = budget.Budgets(calls_per_minute=2, concurrent_per_org=10)
    for _ in range(2):
        with budget.within("personal:rate-test", 901, limits):
            pass
    with pytest.raises(budget.OverBudget) as refused, budget.within("personal:rate-test", 901, limits):
        pass
    answer = refused.value.as_dict()
    assert answer["budget"] == "agent_calls_per_minute" and answer["limit"] == 2
    assert 0 < float(answer["retry_after_s"]) <= 60 and "agent_calls_per_minute" in str(answer["detail"])


def test_concurrency_budget_is_per_organization() -> None:
    limits = budget.Budgets(calls_per_minute=100, concurrent_per_org=1)
    with budget.within("personal:a", 902, limits):
        with (
            pytest.raises(budget.OverBudget, match="agent_concurrency"),
            budget.within("personal:b", 902, limits),
        ):
            pass
        with budget.within("personal:c", 903, limits):  # another organization runs meanwhile
            pass
    with budget.within("personal:b", 902, limits):  # the slot is free again
        pass
