from __future__ import annotations

from collections import Counter

from stacklens.outcomes.counting import (
    DISCARDS_OVER_BOUND,
    MAX_DISCARD_ENTRIES,
    MAX_DISCARD_QUANTITY,
    MAX_DISCARDS_PER_REPORT,
    SDK_MARK,
    accepted_counts,
    as_refused,
    category_of,
    client_discards,
    is_reported,
)


def test_client_discards_keep_the_sdks_reason_under_its_outcome() -> None:
    payload = {
        "discarded_events": [
            {"reason": "ratelimit_backoff", "category": "transaction", "quantity": 3},
            {"reason": "sample_rate", "category": "span", "quantity": 9},
            {"reason": "queue_overflow", "category": "log_item", "quantity": 2},
            {"reason": "before_send", "category": "default", "quantity": 1},
            {"reason": "sample_rate", "category": "profile", "quantity": 5},  # not a category of ours
            {"reason": "", "category": "error", "quantity": 5},
            {"reason": "network_error", "category": "error", "quantity": True},
            "not an entry",
        ]
    }
    # Each reason carries the mark of a quantity the SDK reported until it is tallied (and bounded there).
    assert client_discards(7, payload) == Counter(
        {
            (7, "transaction", "rate_limited", SDK_MARK + "ratelimit_backoff"): 3,
            (7, "span", "filtered", SDK_MARK + "sample_rate"): 9,
            (7, "log", "dropped", SDK_MARK + "queue_overflow"): 2,
            (7, "error", "filtered", SDK_MARK + "before_send"): 1,
        }
    )
    assert all(is_reported(reason) for _, _, _, reason in client_discards(7, payload))
    assert client_discards(7, {"discarded_events": "x"}) == Counter()


def test_a_refused_request_turns_its_accepted_items_into_rate_limited_ones() -> None:
    outcomes = Counter(
        {
            (1, "error", "accepted", ""): 2,
            (1, "error", "invalid", "unreadable"): 1,
            (1, "client_report", "accepted", ""): 1,
            (2, "transaction", "accepted", ""): 4,
        }
    )
    assert accepted_counts(outcomes) == Counter({(1, "error"): 2, (2, "transaction"): 4})
    assert as_refused(outcomes, "rate_limited", "org_quota") == Counter(
        {
            (1, "error", "rate_limited", "org_quota"): 2,
            (1, "error", "invalid", "unreadable"): 1,
            (1, "client_report", "accepted", ""): 1,
            (2, "transaction", "rate_limited", "org_quota"): 4,
        }
    )
    assert category_of("sessions") == "session" and category_of("replay_event") is None


def test_a_report_adds_at_most_what_an_sdk_can_have_dropped_and_says_when_it_claimed_more() -> None:
    """A DSN holder's report of 2**63 items adds the bound, and the report itself counts as over the bound
    (its caller counted it accepted: the -1 takes that back)."""
    lie = {"discarded_events": [{"reason": "sample_rate", "category": "error", "quantity": 2**63}]}
    assert client_discards(3, lie) == Counter(
        {
            (3, "error", "filtered", SDK_MARK + "sample_rate"): MAX_DISCARD_QUANTITY,
            (3, "client_report", "accepted", ""): -1,
            (3, "client_report", "invalid", DISCARDS_OVER_BOUND): 1,
        }
    )
    # Many reasons: at most MAX_DISCARD_ENTRIES entries; a report's total within its bound.
    many = {"discarded_events": [{"reason": f"r{n}", "category": "error", "quantity": 1} for n in range(100)]}
    counts = client_discards(3, many)
    assert len([key for key in counts if is_reported(key[3])]) == MAX_DISCARD_ENTRIES
    assert counts[(3, "client_report", "invalid", DISCARDS_OVER_BOUND)] == 1
    large = {
        "discarded_events": [
            {"reason": f"r{n}", "category": "error", "quantity": MAX_DISCARD_QUANTITY} for n in range(20)
        ]
    }
    counts = client_discards(3, large)
    assert sum(n for key, n in counts.items() if is_reported(key[3])) == MAX_DISCARDS_PER_REPORT
    assert counts[(3, "client_report", "invalid", DISCARDS_OVER_BOUND)] == 1
    # The same entry repeated adds up to the entry's bound, no more.
    repeated = {
        "discarded_events": [{"reason": "x", "category": "span", "quantity": MAX_DISCARD_QUANTITY}] * 3
    }
    assert client_discards(3, repeated)[(3, "span", "dropped", SDK_MARK + "x")] == MAX_DISCARD_QUANTITY
    # An honest report is not marked over the bound; a reason with control characters loses them.
    honest = {"discarded_events": [{"reason": "net\x1fwork\n", "category": "error", "quantity": 5}]}
    assert client_discards(3, honest) == Counter({(3, "error", "dropped", SDK_MARK + "network"): 5})
