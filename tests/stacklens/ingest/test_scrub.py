"""Server-side scrubbing of sentry-sdk events whose own scrubber was switched off."""

from __future__ import annotations

import json
import random

import sentry_sdk
from sentry_sdk.scrubber import EventScrubber

from stacklens.ingest.scrub import is_sensitive_key, scrub_payload, scrub_string
from stacklens_contract.words import FILTERED
from tests.stacklens.ingest.sdk_events import capture

VISA = "4111 1111 1111 1111"  # Luhn-valid test number
NOT_A_CARD = "4111 1111 1111 1112"  # fails Luhn: an order number, kept


SECRETS = {"password": "hunter2", "api_key": "sk_live_abcdef"}


def failing_login(form: dict[str, str]) -> None:
    password = form["password"]
    api_key = form["api_key"]
    card = VISA
    username = "ada"
    raise PermissionError(f"login failed for {username} {len(password + api_key + card)}")


def test_frame_variables_and_extra_are_scrubbed() -> None:
    def run() -> None:
        sentry_sdk.set_extra(
            "checkout", {"credit_card": VISA, "note": f"paid with {VISA}", "order": NOT_A_CARD}
        )
        failing_login(dict(SECRETS))

    event = capture(run, event_scrubber=EventScrubber(denylist=[], pii_denylist=[], recursive=True))
    frame_vars = event["exception"]["values"][-1]["stacktrace"]["frames"][-1]["vars"]
    assert SECRETS["password"] in json.dumps(frame_vars)  # the SDK sent it: the server is the last line
    scrubbed = scrub_payload(event)
    out_vars = scrubbed["exception"]["values"][-1]["stacktrace"]["frames"][-1]["vars"]
    assert out_vars["password"] == FILTERED and out_vars["api_key"] == FILTERED
    assert out_vars["card"] == f"'{FILTERED}'" and out_vars["username"] == "'ada'"  # vars are repr()s
    assert scrubbed["extra"]["checkout"] == {
        "credit_card": FILTERED,
        "note": f"paid with {FILTERED}",
        "order": NOT_A_CARD,
    }
    text = json.dumps(scrubbed)
    assert all(secret not in text for secret in (*SECRETS.values(), VISA))
    assert SECRETS["password"] in json.dumps(event), "the input payload is left unchanged"


def test_request_headers_cookies_query_and_body() -> None:
    payload = {
        "request": {
            "url": "https://shop.example/login?next=/cart&token=abc123",
            "method": "POST",
            "headers": {
                "Authorization": "Bearer xyz",
                "Cookie": "sessionid=1",
                "X-Api-Key": "k",
                "Set-Cookie": "a=b",
                "User-Agent": "Mozilla/5.0",
            },
            "cookies": {"sessionid": "1", "theme": "dark"},
            "query_string": "next=/cart&access_token=abc&page=2",
            "data": {
                "username": "ada",
                "password": "pw",
                "nested": {"apiKey": "k", "csrf_token": "c"},
                "amount": 3,
            },
        }
    }
    req = scrub_payload(payload)["request"]
    assert req["headers"] == {
        "Authorization": FILTERED,
        "Cookie": FILTERED,
        "X-Api-Key": FILTERED,
        "Set-Cookie": FILTERED,
        "User-Agent": "Mozilla/5.0",
    }
    assert req["cookies"] == FILTERED
    assert "access_token=[FILTERED]" in req["query_string"] and "page=2" in req["query_string"]
    assert "token=[FILTERED]" in req["url"] and "abc123" not in req["url"]
    assert req["data"] == {
        "username": "ada",
        "password": FILTERED,
        "nested": {"apiKey": FILTERED, "csrf_token": FILTERED},
        "amount": 3,
    }


def test_string_bodies_header_pairs_and_breadcrumbs() -> None:
    payload = {
        "request": {
            "headers": [["authorization", "Basic x"], ["accept", "text/html"]],
            "data": '{"secret": "s", "card": "5555555555554444"}',
        },
        "breadcrumbs": {"values": [{"category": "http", "data": {"url": "/pay", "auth": "x", "body": VISA}}]},
        "contexts": {"app": {"session": "abc", "name": "shop"}},
    }
    out = scrub_payload(payload)
    assert out["request"]["headers"] == [["authorization", FILTERED], ["accept", "text/html"]]
    assert json.loads(out["request"]["data"]) == {"secret": FILTERED, "card": FILTERED}
    assert out["breadcrumbs"]["values"][0]["data"] == {"url": "/pay", "auth": FILTERED, "body": FILTERED}
    assert out["contexts"]["app"] == {"session": FILTERED, "name": "shop"}


def test_key_names() -> None:
    for key in (
        "password",
        "PASSWD",
        "client_secret",
        "X-Auth-Token",
        "apiKey",
        "api_key",
        "auth",
        "credentials",
        "sessionid",
        "csrfmiddlewaretoken",
    ):
        assert is_sensitive_key(key), key
    for key in ("author", "username", "email", "page", "status"):
        assert not is_sensitive_key(key), key


def test_card_numbers_need_luhn() -> None:
    assert scrub_string(f"card {VISA} ok") == f"card {FILTERED} ok"
    assert scrub_string("4111-1111-1111-1111") == FILTERED
    assert scrub_string(NOT_A_CARD) == NOT_A_CARD
    assert scrub_string("order 12345") == "order 12345"


def test_cards_of_every_network_are_filtered_thread_ids_and_times_are_kept() -> None:
    # Mastercard 2-series, Amex, Visa, Mastercard, Discover, JCB (each Luhn-valid test number).
    for card in ("2223003122003222", "378282246310005", VISA, "5555555555554444", "6011111111111117"):
        assert scrub_string(f"paid {card}") == f"paid {FILTERED}", card
    assert scrub_string("3530 1113 3330 0000") == FILTERED
    # Luhn-valid, but a pthread id and an epoch-milliseconds time: no card begins with 1.
    for number in ("140016105950080", "1795288923125"):
        assert scrub_string(f"thread {number}") == f"thread {number}"
        payload = {"contexts": {"trace": {"data": {"thread.id": number}}}}
        assert scrub_payload(payload, json.dumps(payload).encode()) == payload


def test_identifiers_holding_a_luhn_valid_run_are_kept_cards_beside_them_are_not() -> None:
    # A trace id whose 15-digit run 444985531344618 passes the Luhn check and begins as a Visa does: filtered,
    # it cut a transaction off from its trace and its log records.
    trace = "2c444985531344618dbd138c77d536ce"
    assert scrub_string(trace) == trace
    payload = {"contexts": {"trace": {"trace_id": trace, "span_id": "a4111111111111111"}}, "event_id": trace}
    assert scrub_payload(payload, json.dumps(payload).encode()) == payload
    # Letters on one side are enough; a card between punctuation, or beside an identifier, still goes.
    assert scrub_string(f"{VISA}ab") == f"{VISA}ab" and scrub_string(f"id{VISA}") == f"id{VISA}"
    for text in (f"card:{VISA};", f"card_{VISA}", f"({VISA})", f"{trace} {VISA}", f"x {VISA}"):
        out = scrub_string(text)
        assert out == text.replace(VISA, FILTERED), (text, out)
    # Random hex identifiers (trace ids, event ids) are never touched, whatever digit runs they hold.
    rng = random.Random(45)
    for _ in range(20_000):
        ident = f"{rng.getrandbits(128):032x}"
        assert scrub_string(ident) == ident, ident


def test_raw_text_search_finds_cards_in_every_written_shape() -> None:
    """The one search over the line's text (as ingest runs it) must not miss a card any string holds."""
    for card in (VISA, "4111-1111-1111-1111", "4111111111111111", "3782 822463 10005"):
        payload = {"extra": {"note": f"paid with {card} today"}, "tags": {"thread": "140561604447105"}}
        out = scrub_payload(payload, json.dumps(payload).encode())
        assert out["extra"]["note"] == f"paid with {FILTERED} today", card
    kept = {"extra": {"order": NOT_A_CARD, "ids": ["12345678901234567"]}}
    assert scrub_payload(kept, json.dumps(kept).encode()) == kept


def test_unchanged_subtrees_are_shared_and_the_input_is_left_alone() -> None:
    payload = {"contexts": {"os": {"name": "Linux"}}, "extra": {"a": {"b": [1, "x"]}, "token": "t"}}
    before = json.dumps(payload)
    out = scrub_payload(payload, before.encode())
    assert out["extra"]["token"] == FILTERED and json.dumps(payload) == before
    assert out["contexts"] is payload["contexts"] and out["extra"]["a"] is payload["extra"]["a"]
