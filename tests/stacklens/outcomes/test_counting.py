from __future__ import annotations

from collections import Counter

from stacklens.outcomes.counting import accepted_counts, as_refused, category_of, client_discards


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
    assert client_discards(7, payload) == Counter(
        {
            (7, "transaction", "rate_limited", "ratelimit_backoff"): 3,
            (7, "span", "filtered", "sample_rate"): 9,
            (7, "log", "dropped", "queue_overflow"): 2,
            (7, "error", "filtered", "before_send"): 1,
        }
    )
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
