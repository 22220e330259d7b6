"""Ownership rules in Sentry's syntax: parsing with errors that name the line, each matcher, the last matching
rule winning, and CODEOWNERS conversion."""

from __future__ import annotations

import json
import time

import pytest

from stacklens.errors import InvalidInput
from stacklens.globs import MAX_PATTERN
from stacklens.issues.ownership import (
    MAX_MATCHED,
    MAX_VALUES,
    EventFacts,
    facts_of,
    from_codeowners,
    owner_of,
    parse,
)

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
        (f"path:{'a' * (MAX_PATTERN + 1)} #a", "line 1: a pattern has at most 1,024 characters"),
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


# The probe's rules (issue 62): 21 path rules, several with stars, none matching its frames.
PROBE_RULES = "\n".join(
    [f"path:src/team{i}/* #owners" for i in range(15)]
    + ["path:*a*a*a*a*a*b #owners", "path:*/*/*/*/*.py #owners", "path:a?a?a?*b #owners"]
    + [f"path:lib/*/mod{i}/*.js #owners" for i in range(3)]
)


def test_a_frame_path_of_120000_characters_is_matched_in_milliseconds() -> None:
    rules = parse(PROBE_RULES)
    assert len(rules) == 21
    long_paths = ["/".join(["a"] * 60_000) + str(n) for n in range(3)]  # 120,000 characters, a "/" in two
    started = time.perf_counter()
    for path in long_paths:  # three events, the path as both filename and abs_path
        assert owner_of(rules, facts_of({"exception": {"values": [_frames([path])]}})) is None
    took = time.perf_counter() - started
    # Before: 8,192 characters took 1.0 s and 65,536 took 65.6 s, a frame.
    assert took < 1.0, took


def _frames(paths: list[str]) -> dict[str, object]:
    return {"stacktrace": {"frames": [{"filename": p, "abs_path": p} for p in paths]}}


def test_a_long_path_is_matched_by_its_end() -> None:
    rules = parse("path:src/checkout/* #payments\npath:app/* #app")
    deep = "/app/" + "x/" * 2_000 + "src/checkout/pay.py"
    found = owner_of(rules, EventFacts(paths=[deep]))
    assert found is not None and found[0] == "#payments"  # the file and the folders nearest it count
    # The start of a path longer than the bound is not looked at ("app/*" would match it whole) ...
    assert owner_of(parse("path:app/* #app"), EventFacts(paths=[deep])) is None
    # ... nor does a match start inside the folder name the cut falls in.
    cut_in_a_name = "/" + "y" * (MAX_MATCHED + 10) + "/pay.py"
    assert owner_of(parse("path:y* #y"), EventFacts(paths=[cut_in_a_name])) is None
    assert owner_of(parse("path:pay.py #p"), EventFacts(paths=[cut_in_a_name])) is not None
    # A value other than a path is matched by its start.
    url = "https://shop.test/api/search?" + "q" * 5_000
    assert owner_of(parse("url:https://shop.test/api/* #a"), EventFacts(url=url)) is not None


def test_an_event_gives_at_most_the_bound_of_distinct_paths_nearest_the_crash() -> None:
    frames = [f"src/f{n % (MAX_VALUES + 50)}.py" for n in range(3 * (MAX_VALUES + 50))]
    facts = facts_of({"exception": {"values": [_frames(frames)]}})
    assert len(facts.paths) == MAX_VALUES
    assert facts.paths[-1] == frames[-1] and f"src/f{MAX_VALUES + 49}.py" in facts.paths
    assert "src/f0.py" not in facts.paths  # the outermost frames go first
