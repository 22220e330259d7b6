"""Ownership rules in Sentry's syntax: parsing with errors that name the line, each matcher, the last matching
rule winning, and CODEOWNERS conversion."""

from __future__ import annotations

import json

import pytest

from stacklens.errors import InvalidInput
from stacklens.issues.ownership import EventFacts, facts_of, from_codeowners, owner_of, parse

RULES = """
# Payments own checkout; search has a lead.
path:src/checkout/* #payments
module:shop.billing.* billing@example.test
url:*/api/search* Lead@Example.test
tags.service:worker #platform
tag:region:eu-* #europe
release:2.* #web
path:src/checkout/legacy/* old@example.test
"""


def test_parse_and_match() -> None:
    rules = parse(RULES)
    assert [r.kind for r in rules] == ["path", "module", "url", "tags", "tags", "release", "path"]
    assert (
        rules[2].owners == ("lead@example.test",) and rules[3].tag == "service" and rules[4].tag == "region"
    )

    def owner(**facts: object) -> str | None:
        found = owner_of(rules, EventFacts(**facts))
        return found[0] if found else None

    assert owner(paths=["/app/src/checkout/pay.py"]) == "#payments"
    assert owner(paths=["src/checkout/pay.py"]) == "#payments"
    assert owner(paths=["SRC/Checkout/pay.py"]) == "#payments"  # case is ignored
    assert owner(paths=["src/checkouts/pay.py"]) is None
    assert owner(paths=["/app/src/checkout/legacy/old.py"]) == "old@example.test"  # the last match wins
    assert owner(modules=["shop.billing.invoices"]) == "billing@example.test"
    assert owner(url="https://shop.test/api/search?q=x") == "lead@example.test"
    assert owner(tags={"service": "worker"}) == "#platform"
    assert owner(tags={"service": "web", "region": "eu-west"}) == "#europe"
    assert owner(release="2.4.1") == "#web"
    assert owner(release="1.0.0", url="https://shop.test/cart") is None
    # Several match: the last one in the file.
    assert owner(paths=["src/checkout/pay.py"], release="2.0") == "#web"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("path:src/* ", "line 1: write"),
        ("\n\nfile:src/* #a", "line 3: write"),
        ("path:src/* someone", "line 1: owner 'someone' is neither #team nor an e-mail"),
        ("path:src/* #nope", "line 1: #nope is not a team or member"),
        ("x" * 50_001, "at most 50,000 characters"),
    ],
)
def test_errors_name_the_line(text: str, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        parse(text, lambda owner: owner != "#nope")


def test_facts_of_a_stored_event() -> None:
    payload = {
        "exception": {
            "values": [
                {
                    "stacktrace": {
                        "frames": [{"filename": "a.py", "abs_path": "/app/a.py", "module": "shop.a"}]
                    }
                },
                {"stacktrace": {"frames": [{"filename": "src/checkout/pay.py"}, "junk"]}},
            ]
        }
    }
    facts = facts_of(json.dumps(payload), url="https://x.test/", release="1.0", tags={"service": "web"})
    assert facts.paths == ["a.py", "/app/a.py", "src/checkout/pay.py"] and facts.modules == ["shop.a"]
    assert facts.url == "https://x.test/" and facts.tags == {"service": "web"}
    assert facts_of("not json").paths == [] and facts_of('{"exception": [1]}').paths == []


def test_codeowners() -> None:
    text = """# comment
[Section]
/src/checkout/ @acme/payments @alice
*.js @acme/frontend   # inline comment
docs/* dev@example.test
/legacy/ @ghost
"""
    rules, notes = from_codeowners(text, {"alice": "alice@example.test"}, ["payments"])
    assert rules.splitlines() == [
        "path:src/checkout/ #payments alice@example.test",
        "path:docs/* dev@example.test",
    ]
    assert notes == [
        "line 4: @acme/frontend is no team here (create #frontend), left out",
        "line 4: *.js has no owner here, skipped",
        "line 6: @ghost is no member here, left out",
        "line 6: /legacy/ has no owner here, skipped",
    ]
    parsed = parse(rules)
    assert owner_of(parsed, EventFacts(paths=["/srv/src/checkout/pay.py"])) is not None
