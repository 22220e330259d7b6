"""A rule is refused naming its index and field (method, type, pattern, applies_to), and read from its JSON
form with the defaults filled in (`$string` when no selector is given; a pattern only for type pattern)."""

from __future__ import annotations

import pytest

from stacklens.errors import InvalidInput
from stacklens.scrubbing.rules import MAX_RULES, RuleSpec, check_rules, spec_of


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        (RuleSpec("zap", "email"), r"rules\[1\]\.method: 'zap'"),
        (RuleSpec("mask", "phone"), r"rules\[1\]\.type: 'phone'"),
        (RuleSpec("mask", "email", None, "extra.$nope"), r"rules\[1\]\.applies_to: unknown value type"),
        (RuleSpec("hash", "pattern", "(x", "$string"), r"rules\[1\]\.pattern: not a pattern RE2 can run"),
        (RuleSpec("hash", "pattern", None, "$string"), r"rules\[1\]\.pattern: a rule of type pattern needs"),
    ],
)
def test_a_wrong_rule_is_named_by_index_and_field(spec: RuleSpec, words: str) -> None:
    with pytest.raises(InvalidInput, match=words):
        check_rules([RuleSpec("mask", "email"), spec])


def test_rules_read_from_json_with_their_defaults() -> None:
    assert spec_of({"method": "mask", "type": "email"}, 0) == RuleSpec("mask", "email", None, "$string")
    assert (
        spec_of({"method": "hash", "type": "ip", "pattern": "x", "applies_to": " user "}, 0).pattern is None
    )
    with pytest.raises(InvalidInput, match=r"rules\[3\]\.pattern: text expected"):
        spec_of({"method": "hash", "type": "pattern", "pattern": 5}, 3)
    with pytest.raises(InvalidInput, match="at most"):
        check_rules([RuleSpec("mask", "email")] * (MAX_RULES + 1))
