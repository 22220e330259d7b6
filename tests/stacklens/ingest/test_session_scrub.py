"""Release-health items scrubbed before their rows are made (stacklens/ingest/session_scrub.py): the user a
session names (`did`) follows the rules an event's user follows — `user.email` when it is an e-mail address,
`user.id` else, `$string` and patterns anywhere — to the same hash as in events; the built-in scrubbing takes
card numbers and secret-shaped strings out; a removed `did` is stored as no user; the client's address is
never kept; aggregate buckets too; the rows (prepare_items) hold none of it."""

from __future__ import annotations

import re
from typing import Any

import orjson

from stacklens.ingest.prepare_items import normalise_sessions
from stacklens.ingest.prepared_rows import Attribution, Prepared
from stacklens.ingest.session_scrub import scrub_session
from stacklens.scrubbing.apply import NO_RULES, ScrubRules
from stacklens.scrubbing.rules import RuleSpec, check_rules
from tests.stacklens.ingest.test_prepare_items import ORIGIN, _line, _session

EMAIL = "jane.doe@example.com"
ATTRS = {"release": "shop@1.3.0", "environment": "production", "ip_address": "203.0.113.9"}


def _rules(*specs: RuleSpec) -> ScrubRules:
    return ScrubRules(tuple(check_rules(list(specs))), b"project-salt")


DEMO_LIKE = _rules(
    RuleSpec("hash", "email", None, "user.email"),
    RuleSpec("mask", "email", None, "$string && !user.email"),
)


def test_an_email_did_is_hashed_as_the_events_user_email_is() -> None:
    payload = _session(did=EMAIL, attrs=ATTRS)
    out = scrub_session("session", payload, DEMO_LIKE)
    event = DEMO_LIKE.apply({"user": {"email": EMAIL}})
    assert re.fullmatch(r"[0-9a-f]{16}", out["did"]) and out["did"] == event["user"]["email"]
    assert "ip_address" not in out["attrs"] and out["attrs"]["release"] == "shop@1.3.0"
    assert payload["did"] == EMAIL and payload["attrs"]["ip_address"] == "203.0.113.9"  # input unchanged


def test_an_id_did_follows_user_id_and_string_rules_and_a_removed_did_is_no_user() -> None:
    masked = _rules(RuleSpec("hash", "pattern", r"cust_(\d+)", "$string"))
    out = scrub_session("session", _session(did="cust_77731"), masked)
    assert re.fullmatch(r"cust_[0-9a-f]{16}", out["did"])
    removed = _rules(RuleSpec("remove", "pattern", r".+", "user.id"))
    assert "did" not in scrub_session("session", _session(did="1003"), removed)
    kept = scrub_session("session", _session(did="1003"), _rules(RuleSpec("remove", "email", None, "$user")))
    assert kept["did"] == "1003"


def test_the_built_in_scrubbing_takes_card_numbers_and_secrets_out_without_rules() -> None:
    card = scrub_session("session", _session(did="4111 1111 1111 1111"), NO_RULES)
    assert "4111" not in card["did"]
    secret = "ghp_" + "a1B2" * 9
    assert secret not in scrub_session("session", _session(did=secret), NO_RULES)["did"]


def test_aggregate_buckets_are_scrubbed_each_and_their_address_dropped() -> None:
    payload = {
        "attrs": ATTRS,
        "aggregates": [
            {"started": "2026-01-01T00:00:00Z", "did": EMAIL, "exited": 2},
            {"started": "2026-01-01T00:01:00Z", "errored": 1},
        ],
    }
    out = scrub_session("sessions", payload, DEMO_LIKE)
    assert re.fullmatch(r"[0-9a-f]{16}", out["aggregates"][0]["did"])
    assert out["aggregates"][1] == payload["aggregates"][1] and "ip_address" not in out["attrs"]


def test_the_stored_rows_hold_no_planted_user_data() -> None:
    who = Attribution(project_id=7, service=None, app_key_id=3, scrubbing=DEMO_LIKE)
    prepared = Prepared()
    agent = {**ATTRS, "user_agent": f"Mozilla/5.0 (contact {EMAIL})"}
    normalise_sessions(_line("session", _session(did=EMAIL, attrs=agent)), who, ORIGIN, prepared)
    [row] = prepared.tables["sessions"]
    stored: dict[str, Any] = orjson.loads(row[3])
    assert EMAIL not in row[3].decode() and "203.0.113.9" not in row[3].decode()
    assert re.fullmatch(r"[0-9a-f]{16}", stored["distinct_id"])
    assert stored["user_agent"] == "Mozilla/5.0 (contact " + "*" * len(EMAIL) + ")"
