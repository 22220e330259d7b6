"""The call budgets: a token's calls per minute, an organization's calls at once and the agents' share of the
server's time for Explore, each refusal naming its budget, its limit and when to retry; another organization
is not held back by the first two."""

from __future__ import annotations

import pytest

from stacklens.agents.budget import BudgetBook, Budgets, LaneShare, OverBudget


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


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_explore_share_bounds_the_time_questions_hold() -> None:
    clock = Clock()
    share = LaneShare(0.25, burst_s=1.0, clock=clock)

    def question(seconds: float) -> None:
        with share.held("agent_explore_share"):
            clock.now += seconds

    question(0.6)  # within the second in hand
    question(0.6)  # may start (0.4 s left), ends 0.2 s past it: the bucket is now below zero
    with pytest.raises(OverBudget) as refused:
        question(0.1)
    answer = refused.value.as_dict()
    assert answer["budget"] == "agent_explore_share" and answer["limit"] == 0.25
    # 0.05 s owed (0.4 s in hand, 0.15 s filled during the second question, 0.6 s taken): 0.2 s to fill it
    assert answer["retry_after_s"] == pytest.approx(0.2, abs=0.05)
    clock.now += float(str(answer["retry_after_s"])) + 0.01
    question(0.1)  # told when, and it is so
    # Over a long stretch of questions asked as soon as allowed, they hold about a quarter of the time.
    start, held = clock.now, 0.0
    while clock.now - start < 600:
        try:
            question(0.5)
            held += 0.5
        except OverBudget as exc:
            clock.now += exc.retry_after_s + 0.001
    assert 0.24 <= held / (clock.now - start) <= 0.26 + 1.0 / 600


def test_every_book_has_its_explore_share() -> None:
    assert BudgetBook(Budgets(explore_share=0.1)).explore.share == 0.1
    assert BudgetBook().explore.share == 0.25
