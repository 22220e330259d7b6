"""Log records scrubbed with their user seen as an event's user (stacklens/ingest/log_scrub.py):
sentry-python's `user.id`, `user.name`, `user.email` and `user.ip_address` attributes follow the rules written
for an event's user (`user.email`, `user.ip_address`, `$user`) to the same hash as in events, plain or in
Sentry's typed form; rules on `attributes.'user.email'` and `$string` still apply; the row (prepare_items)
holds none of it, and a planted agent token in the body is filtered by the built-in scrubbing."""

from __future__ import annotations

import re
from typing import Any

import orjson

from stacklens.ingest.log_scrub import scrub_log
from stacklens.ingest.logs import log_window
from stacklens.ingest.prepare_items import normalise_log
from stacklens.ingest.prepared_rows import Attribution, BatchContext, Prepared
from stacklens.scrubbing.apply import NO_RULES, ScrubRules
from stacklens.scrubbing.rules import RuleSpec, check_rules
from stacklens_contract.words import FILTERED
from tests.stacklens.ingest.test_prepare_items import NOW, _line

EMAIL = "mia.log@example.com"
IP = "198.51.100.7"


def _rules(*specs: RuleSpec) -> ScrubRules:
    return ScrubRules(tuple(check_rules(list(specs))), b"project-salt")


DEMO_LIKE = _rules(
    RuleSpec("hash", "email", None, "user.email"),
    RuleSpec("mask", "email", None, "$string && !user.email"),
    RuleSpec("remove", "ip", None, "user.ip_address"),
)


def _typed(value: Any) -> dict[str, Any]:
    return {"value": value, "type": "integer" if isinstance(value, int) else "string"}


def _record(**attributes: Any) -> dict[str, Any]:
    return {"body": "nightly export ran", "level": "info", "timestamp": NOW - 5, "attributes": attributes}


def test_the_user_email_is_hashed_as_the_events_user_email_is_and_the_ip_removed() -> None:
    event = DEMO_LIKE.apply({"user": {"email": EMAIL, "ip_address": IP}})
    record = _record(**{"user.email": _typed(EMAIL), "user.ip_address": _typed(IP), "user.id": _typed(42)})
    out = scrub_log(record, DEMO_LIKE)
    hashed = out["attributes"]["user.email"]
    assert re.fullmatch(r"[0-9a-f]{16}", hashed) and hashed == event["user"]["email"]
    assert "ip_address" not in event["user"] and "user.ip_address" not in out["attributes"]
    assert out["attributes"]["user.id"] == _typed(42) and "user" not in out
    assert record["attributes"]["user.email"] == _typed(EMAIL)  # the input is not changed
    plain = scrub_log(_record(**{"user.email": EMAIL}), DEMO_LIKE)
    assert plain["attributes"]["user.email"] == hashed


def test_user_rules_by_key_and_by_part_and_the_attribute_rules_still_apply() -> None:
    record = _record(**{"user.id": "cust_31337", "user.name": "mia", "user.email": EMAIL, "note": "cust_9"})
    by_part = scrub_log(record, _rules(RuleSpec("mask", "pattern", r"cust_(\d+)", "$user")))
    assert by_part["attributes"]["user.id"] == "cust_*****" and by_part["attributes"]["note"] == "cust_9"
    by_name = scrub_log(record, _rules(RuleSpec("remove", "pattern", ".", "user.username")))
    assert "user.name" not in by_name["attributes"] and by_name["attributes"]["user.email"] == EMAIL
    as_sent = scrub_log(record, _rules(RuleSpec("mask", "email", None, "attributes.'user.email'")))
    assert as_sent["attributes"]["user.email"] == "*" * len(EMAIL)
    everywhere = _rules(RuleSpec("hash", "email", None, "$string"))
    hashed = scrub_log({**record, "body": f"refund for {EMAIL}"}, everywhere)
    event = everywhere.apply({"user": {"email": EMAIL}})
    assert hashed["attributes"]["user.email"] == event["user"]["email"]
    assert hashed["body"] == "refund for " + event["user"]["email"]
    assert scrub_log(record, NO_RULES) is record


def test_the_logs_row_holds_the_hash_and_no_address_and_no_agent_token() -> None:
    token = "stacklens_pat_" + "Qm9vT2tlbl9mb3JfYV90ZXN0X29ubHlfMTIzNDU2Nzg"
    who = Attribution(project_id=7, service=None, app_key_id=3, scrubbing=DEMO_LIKE)
    prepared = Prepared()
    context = BatchContext(org_id=1, batch_id="batch-1", received=NOW, header_app_key=None)
    record = _record(**{"user.email": _typed(EMAIL), "user.ip_address": _typed(IP), "job": f"token={token}"})
    record["body"] = f"export ran with {token}"
    normalise_log(_line("log", record), who, context, log_window(NOW, 30), prepared)
    text = prepared.tables["logs"][0][3].decode()
    stored = orjson.loads(text)
    assert stored["attributes"]["user.email"] == DEMO_LIKE.apply({"user": {"email": EMAIL}})["user"]["email"]
    assert (
        stored["body"] == f"export ran with {FILTERED}" and stored["attributes"]["job"] == f"token={FILTERED}"
    )
    assert EMAIL not in text and IP not in text and token not in text
