"""Secret shapes are filtered in every string of an event at ingest: the StackLens keys that sentry-sdk's
``sys.argv`` extra carries, cloud and forge tokens, JWTs, private keys, URL passwords; ordinary text and
URLs stay as they are, and lines with no secret marker skip the walk."""

from __future__ import annotations

import json
import random
import sys

import pytest
import sentry_sdk
from sentry_sdk.integrations.argv import ArgvIntegration

from stacklens.ingest import secret_redaction
from stacklens.ingest.scrub import scrub_payload
from stacklens.ingest.secret_redaction import (
    _MARKERS_RAW,
    _SECRET_MARKERS_RAW,
    holds_marker,
    markers_in,
    redact_everywhere,
    redact_line,
    secret_hint,
)
from stacklens_contract.secret_shapes import redactor_for
from stacklens_contract.words import FILTERED

APP_KEY = "stacklens_app_" + "Ab3dEfGhIjKlMnOpQrStUvWx"
SERVICE_KEY = "stacklens_app_worker_" + "Zz9dEfGhIjKlMnOpQrStUvWx"
API_KEY = "stacklens_api_" + "0123456789abcdefghijABCDEFGHIJkl"
SECRETS = {
    "aws": "AKIA" + "IOSFODNN7EXAMPLE",
    "github": "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "slack": "xoxb-" + "123456789012-123456789012-AbCdEfGhIjKlMnOp",
    "stripe": "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "jwt": "eyJhbGciOiJIUzI1NiJ9."
    + "eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "pem": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----",
}


def _argv_event(monkeypatch: pytest.MonkeyPatch) -> dict:
    """What sentry-sdk sends for a shipper-like process started with its key on the command line."""
    monkeypatch.setattr(sys, "argv", ["stacklens-shipper", "--app-key", APP_KEY, f"--api-key={API_KEY}"])
    events: list[dict] = []
    client = sentry_sdk.Client(
        dsn="https://public@example.invalid/1",
        default_integrations=False,
        integrations=[ArgvIntegration()],
        before_send=lambda event, hint: events.append(event) and None,
    )
    with sentry_sdk.isolation_scope() as scope:
        scope.set_client(client)
        scope.capture_message("shipper failed")
    client.close()
    return events[0]


def test_sys_argv_keys_are_filtered(monkeypatch: pytest.MonkeyPatch) -> None:
    payload = _argv_event(monkeypatch)
    assert APP_KEY in payload["extra"]["sys.argv"]
    raw = json.dumps(payload).encode()
    scrubbed = scrub_payload(payload, raw)
    assert scrubbed["extra"]["sys.argv"] == [
        "stacklens-shipper",
        "--app-key",
        FILTERED,
        f"--api-key={FILTERED}",
    ]
    assert APP_KEY not in json.dumps(scrubbed) and API_KEY not in json.dumps(scrubbed)
    assert APP_KEY in payload["extra"]["sys.argv"]  # the input is not changed


def test_every_string_of_the_event_is_searched() -> None:
    payload = {
        "message": f"connect with {SERVICE_KEY} failed",
        "culprit": f"token {SECRETS['github']}",
        "modules": {"x": SECRETS["aws"]},
        "exception": {"values": [{"type": "Error", "value": f"bad jwt {SECRETS['jwt']}"}]},
        "breadcrumbs": {
            "values": [{"message": SECRETS["slack"], "data": {"url": "postgres://app:hunter2@db/x"}}]
        },
        "contexts": {"runtime": {"key": SECRETS["pem"]}},
        "fingerprint": [SECRETS["stripe"]],
        "request": {"url": "https://shop.example/pay?next=/a", "headers": {"Referer": "https://a.example/b"}},
    }
    raw = json.dumps(payload).encode()
    assert secret_hint(raw)
    text = json.dumps(scrub_payload(payload, raw))
    for name, secret in {**SECRETS, "service": SERVICE_KEY, "url": "hunter2"}.items():
        assert secret.replace("\n", "\\n") not in text, name
    assert "postgres://app:[FILTERED]@db/x" in text and "https://a.example/b" in text


def test_ordinary_lines_skip_the_walk_and_keep_their_text() -> None:
    payload = {"message": "high load through the gateway", "request": {"url": "https://x.example/a@b"}}
    raw = json.dumps(payload).encode()
    assert not secret_hint(raw)
    assert scrub_payload(payload, raw) == payload
    for text in ("stacklens_app_ is the prefix", "see https://example.com/x", "ASIAN food", "eyJ alone"):
        assert redact_everywhere({text: [text]}) == {text: [text]}


def _line(app_key: str, payload: dict) -> bytes:
    """A line as an SDK writes it or an envelope becomes: its own app key beside the payload."""
    return json.dumps(
        {"v": 1, "type": "event", "app_key": app_key, "ts": "2026-11-26T00:00:00Z", "payload": payload}
    ).encode()


def test_a_lines_own_app_key_is_no_hint_but_any_other_occurrence_is(monkeypatch: pytest.MonkeyPatch) -> None:
    ordinary = {"message": "high load through the gateway", "extra": {"n": 1}}
    raw = _line(APP_KEY, ordinary)
    assert secret_hint(raw)  # read as text alone, the key field looks like a secret
    assert not secret_hint(raw, APP_KEY)  # it is the line's own: no walk over every string
    assert scrub_payload(ordinary, raw, line_key=APP_KEY) == ordinary
    # The same key in the payload (sentry-sdk's sys.argv), another key, or another shape still is.
    argv = _argv_event(monkeypatch)
    raw = _line(APP_KEY, argv)
    assert secret_hint(raw, APP_KEY)
    assert APP_KEY not in json.dumps(scrub_payload(argv, raw, line_key=APP_KEY))
    for leaked in (SERVICE_KEY, SECRETS["aws"], SECRETS["github"], "postgres://app:hunter2@db/x"):
        payload = {"message": f"failed with {leaked}"}
        raw = _line(APP_KEY, payload)
        assert secret_hint(raw, APP_KEY), leaked
        assert leaked not in json.dumps(scrub_payload(payload, raw, line_key=APP_KEY)), leaked


def _texts_around(markers: tuple[bytes, ...], seed: int) -> list[bytes]:
    """Edge cases and 2,000 random texts of ``markers``, their cut-short and two- and three-byte beginnings
    and the letters they share: markers at the start, at the end, cut short and overlapping."""
    rng = random.Random(seed)
    pieces = [*markers, *(m[:-1] for m in markers), *(m[:2] for m in markers), *(m[:3] for m in markers)]
    alphabet = b'eyJxoAKISPRgkh_sta"{}:,0123456789 abcdefghijklmnopqrstuvwxyz'
    texts = [b"", b"g", b"gh", b"xgh", b"xo", b"xox", b"AKI", b"AKIA", b"eyJhbGc", b"eyJhbGci", b"PRIVATE KE"]
    texts += [b"...xox", b"ghp_...", b"stacklens_a"]
    for _ in range(2_000):
        parts = [bytes(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))]
        for _ in range(rng.randint(0, 4)):
            parts.append(rng.choice(pieces))
            parts.append(bytes(rng.choice(alphabet) for _ in range(rng.randint(0, 10))))
        texts.append(b"".join(parts))
    return texts


def test_the_one_pass_scan_finds_exactly_what_substring_searches_find() -> None:
    """Once compiled, the raw-line check and the walk's choice of markers scan once for every marker; they
    must answer what a substring search per marker answers, two-byte markers included."""
    for seed, markers in enumerate((_SECRET_MARKERS_RAW, _SECRET_MARKERS_RAW[1:], _MARKERS_RAW)):
        for text in _texts_around(markers, seed):
            assert holds_marker(text, markers) == any(m in text for m in markers), (text, markers)
            expected = tuple(j for j, marker in enumerate(markers) if marker in text)
            assert markers_in(text, markers) == expected, (text, markers)


def test_the_marker_tables_are_kept_for_a_few_marker_sets_only() -> None:
    """Once compiled, the scan's tables are built once per set of markers and found again by the next line,
    and a caller passing many sets of its own keeps only a few: every set answers as a substring search does,
    whether its tables were built or found."""
    rng = random.Random(46)
    sets = [tuple(rng.sample(_SECRET_MARKERS_RAW, rng.randint(1, 5))) for _ in range(40)]
    text = b"...".join(rng.sample(_SECRET_MARKERS_RAW, 3)) + b" plain text"
    before = secret_redaction._marker_tables.cache_info().hits
    for markers in sets:
        for _line in range(2):
            assert holds_marker(text, markers) == any(m in text for m in markers)
    kept = secret_redaction._marker_tables.cache_info()
    assert kept.currsize <= kept.maxsize == 16
    if secret_redaction.COMPILED:
        assert kept.hits - before >= len(sets)  # each set's second line found its tables


def test_a_walked_line_is_redacted_as_the_contracts_redactor_for_it_redacts() -> None:
    """``redact_line`` (the markers found in one pass, strings without them passed over) gives what the
    contract's own redactor for the line gives, for a line holding keys and a URL password, one escaping a
    letter, one with another shape, one with none, and a value without its line."""
    secret = f"token {SECRETS['github']} and {SERVICE_KEY}"
    payload = {
        "message": secret,
        SECRETS["aws"]: ["plain text", f"https://user:pw@{SECRETS['aws']}.example/x", {"k": SERVICE_KEY}],
        "n": 3,
    }
    for raw in (
        json.dumps(payload).encode(),
        json.dumps({"m": "\\u0067hp_" + "a" * 36}).encode(),
        json.dumps({"m": SECRETS["aws"]}).encode(),
        b"{}",
        None,
    ):
        expected = redact_everywhere(payload, redact=redactor_for(raw))
        assert redact_line(payload, raw) == expected, raw


def test_the_products_agent_tokens_are_filtered_in_an_event_and_a_log_beside_the_lines_own_key() -> None:
    """Personal and OAuth tokens (stacklens/agents/tokens.py) pasted into an error message, a breadcrumb or a
    log body: the raw line is hinted despite carrying its own app key, and each token is filtered."""
    from stacklens.agents.tokens import ACCESS_PREFIX, PERSONAL_PREFIX, REFRESH_PREFIX, new_secret

    tokens = [new_secret(prefix) for prefix in (PERSONAL_PREFIX, ACCESS_PREFIX, REFRESH_PREFIX)]
    event = {
        "exception": {"values": [{"type": "AuthError", "value": f"refused {tokens[0]}"}]},
        "breadcrumbs": {"values": [{"message": f"refreshed with {tokens[2]}"}]},
        "extra": {"header": f"Token {tokens[1]}"},
    }
    log = {"extra": {"body": f"agent called with {tokens[0]}", "attributes": {"t": tokens[1]}}}
    for payload in (event, log):
        raw = _line(APP_KEY, payload)
        assert secret_hint(raw, APP_KEY)
        text = json.dumps(scrub_payload(payload, raw, line_key=APP_KEY))
        assert not [token for token in tokens if token in text] and FILTERED in text
