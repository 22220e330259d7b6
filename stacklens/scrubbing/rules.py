"""A project's scrubbing rules as written (:class:`RuleSpec`) and checked: each one's method, type, pattern
and selector, refused with the rule's index and field named (``rules[2].applies_to: …``) so nothing is saved
when one rule is wrong."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from stacklens.errors import InvalidInput
from stacklens.scrubbing.patterns import TYPES, BadPattern, Finder, finder
from stacklens.scrubbing.selectors import BadSelector, Selector, parse_selector

METHODS = ("mask", "remove", "hash")
MAX_RULES = 50
DEFAULT_SELECTOR = "$string"
# What is scrubbed whatever the rules say (stacklens.ingest.scrub), shown beside the rules: the defaults of
# every project.
BUILT_IN = [
    "Values under sensitive names (password, secret, token, api_key, session, cookie, authorization, …) "
    "anywhere in an event become [FILTERED].",
    "Authorization, Cookie, Set-Cookie and other credential headers, and all cookies, become [FILTERED].",
    "Luhn-valid card numbers in any string become [FILTERED].",
    "Secret-shaped strings (StackLens keys, cloud and forge tokens, JWTs, private keys, passwords in URLs) "
    "become [FILTERED].",
]


@dataclass(frozen=True)
class RuleSpec:
    """One rule as the API and the settings page give it."""

    method: str
    type: str
    pattern: str | None = None
    applies_to: str = DEFAULT_SELECTOR

    def as_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "type": self.type,
            "pattern": self.pattern,
            "applies_to": self.applies_to,
        }


@dataclass(frozen=True)
class CheckedRule:
    """A rule ready to run: its selector read and its finder compiled."""

    spec: RuleSpec
    selector: Selector
    find: Finder


def check_rule(spec: RuleSpec, index: int) -> CheckedRule:
    """The rule ready to run, or :class:`InvalidInput` naming ``rules[index].<field>``."""
    where = f"rules[{index}]"
    if spec.method not in METHODS:
        raise InvalidInput(f"{where}.method: {spec.method!r} is not one of {', '.join(METHODS)}")
    if spec.type not in TYPES:
        raise InvalidInput(f"{where}.type: {spec.type!r} is not one of {', '.join(TYPES)}")
    try:
        selector = parse_selector(spec.applies_to)
    except BadSelector as exc:
        raise InvalidInput(f"{where}.applies_to: {exc}") from None
    try:
        find = finder(spec.type, spec.pattern)
    except BadPattern as exc:
        raise InvalidInput(f"{where}.pattern: {exc}") from None
    return CheckedRule(spec, selector, find)


def check_rules(specs: Sequence[RuleSpec]) -> list[CheckedRule]:
    """Every rule checked, the first wrong one refused (:class:`InvalidInput`)."""
    if len(specs) > MAX_RULES:
        raise InvalidInput(f"rules: at most {MAX_RULES} rules per project")
    return [check_rule(spec, index) for index, spec in enumerate(specs)]


def spec_of(value: Any, index: int) -> RuleSpec:
    """A rule from its JSON object (the stored form, or a form's fields); :class:`InvalidInput` names the
    field."""
    where = f"rules[{index}]"
    if not isinstance(value, dict):
        raise InvalidInput(f"{where}: a rule is an object with method, type, pattern and applies_to")
    fields = {}
    for name in ("method", "type", "pattern", "applies_to"):
        item = value.get(name)
        if item is not None and not isinstance(item, str):
            raise InvalidInput(f"{where}.{name}: text expected")
        fields[name] = item
    kind = (fields["type"] or "").strip()
    pattern = fields["pattern"] if kind == "pattern" else None
    return RuleSpec(
        method=(fields["method"] or "").strip(),
        type=kind,
        pattern=pattern,
        applies_to=(fields["applies_to"] or "").strip() or DEFAULT_SELECTOR,
    )
