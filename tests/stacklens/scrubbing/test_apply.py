"""Rules applied to a payload: mask, hash and remove on what the selector covers (a matched object covers
everything in it), header pairs by name, the input left as it was, pickled to a worker process as its
specs."""

from __future__ import annotations

import copy
import pickle
from typing import Any

from stacklens.scrubbing.apply import NO_RULES, ScrubRules
from stacklens.scrubbing.rules import RuleSpec, check_rules


def _rules(*specs: RuleSpec) -> ScrubRules:
    return ScrubRules(tuple(check_rules(specs)), b"salt")


EVENT: dict[str, Any] = {
    "message": "mail jane@example.com",
    "tags": {"customer_email": "jane@example.com", "plan": "pro"},
    "extra": {"customer": "cust_12345", "public": "jane@example.com"},
    "request": {"headers": [["Authorization", "Bearer abc123"], ["X-Trace", "Bearer zz9"]], "url": "/x"},
    "user": {"ip_address": "10.1.2.3", "id": 42},
    "exception": {
        "values": [
            {"type": "E", "value": "card 4111111111111111", "stacktrace": {"frames": [{"vars": {"n": 7}}]}}
        ]
    },
}


def test_mask_hash_and_remove_follow_the_selectors() -> None:
    before = copy.deepcopy(EVENT)
    rules = _rules(
        RuleSpec("mask", "email", None, "$string && !extra.public"),
        RuleSpec("hash", "pattern", r"cust_(\d+)", "extra.*"),
        RuleSpec("remove", "ip", None, "user"),
        RuleSpec("mask", "bearer", None, "$http.headers.X-Trace"),
        RuleSpec("mask", "credit_card", None, "$error.value"),
        RuleSpec("hash", "pattern", r"\d+", "user.id"),
    )
    out = rules.apply(EVENT)
    assert before == EVENT  # the input is not changed
    assert out["message"] == "mail " + "*" * 16
    assert out["tags"] == {"customer_email": "*" * 16, "plan": "pro"}
    assert out["extra"]["public"] == "jane@example.com"
    assert out["extra"]["customer"].startswith("cust_") and len(out["extra"]["customer"]) == 5 + 16
    assert (
        out["extra"]["customer"] == rules.apply(EVENT)["extra"]["customer"]
    )  # the same value, the same hash
    assert "ip_address" not in out["user"] and len(out["user"]["id"]) == 16
    assert out["request"]["headers"] == [["Authorization", "Bearer abc123"], ["X-Trace", "*" * 10]]
    assert out["exception"]["values"][0]["value"] == "card " + "*" * 16
    assert out["exception"]["values"][0]["stacktrace"] is EVENT["exception"]["values"][0]["stacktrace"]


def test_no_rules_and_untouched_subtrees_cost_no_copy() -> None:
    assert NO_RULES.apply(EVENT) is EVENT
    out = _rules(RuleSpec("mask", "email", None, "tags.customer_email")).apply(EVENT)
    assert out["extra"] is EVENT["extra"] and out["request"] is EVENT["request"]


def test_compiled_rules_pickle_as_their_specs() -> None:
    rules = _rules(RuleSpec("hash", "pattern", r"cust_(\d+)", "extra.*"))
    again = pickle.loads(pickle.dumps(rules))
    assert again.apply(EVENT) == rules.apply(EVENT)


def test_a_rule_whose_type_the_raw_line_cannot_hold_is_skipped() -> None:
    rules = _rules(RuleSpec("mask", "email", None, "$string"), RuleSpec("mask", "bearer", None, "$string"))
    plain = {"message": "nothing to hide"}
    assert rules.apply(plain, b'{"message": "nothing to hide"}') is plain
    escaped = {"message": "ann@example.com"}  # the line spelled "@" as \u0040: never judged by its bytes
    assert rules.apply(escaped, b'{"message": "ann\\u0040example.com"}') == {"message": "*" * 15}
    mixed = {"message": "ann@example.com", "auth": "Bearer abc"}
    assert rules.apply(mixed, b'{"message": "ann@example.com", "auth": "x"}') == {
        "message": "*" * 15,
        "auth": "Bearer abc",  # the bearer rule was skipped for this line
    }
