"""The call budgets: a token's calls per minute and an organization's calls at once, each refusal naming
its budget, its limit and when to retry; another organization is not held back."""

from __future__ import annotations

import pytest

from stacklens.agents.budget import BudgetBook, Budgets, OverBudget


def test_rate_budget_names_itself() -> None:
    book = BudgetBook(Budgets(calls_per_minute=2, concurrent_per_org=10))
    for _ in range(2):
        with book.within("personal:1", 1):
            pass
    with pytest.raises(OverBudget) as refused, book.within("personal:1", 1):
        pass
    answer = refused.value.as_dict()
    assert answer["budget"] == "agent_calls_per_minute" and answer["limit"] == 2
    assert 0 < float(str(answer["retry_after_s"])) <= 60 and "agent_calls_per_minute" in str(answer["detail"])
    with book.within("personal:2", 1):  # another token of the organization has its own minute
        pass
    with BudgetBook(Budgets(calls_per_minute=2)).within("personal:1", 1):  # another server's book
        pass


def test_concurrency_budget_is_per_organization() -> None:
    book = BudgetBook(Budgets(calls_per_minute=100, concurrent_per_org=1))
    with book.within("personal:a", 1):
        with pytest.raises(OverBudget, match="agent_concurrency"), book.within("personal:b", 1):
            pass
        with book.within("personal:c", 2):  # another organization runs meanwhile
            pass
    with book.within("personal:b", 1):  # the slot is free again
        pass
