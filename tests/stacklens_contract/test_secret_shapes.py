"""The secret shapes: each is redacted wherever it stands in a text, ordinary text and URLs stay as they
are, and every shape holds one of the markers that decide whether the expression runs at all."""

from __future__ import annotations

import json

import pytest

from stacklens_contract.secret_shapes import SECRET_MARKERS, SECRET_RE, redact_secrets, redactor_for
from stacklens_contract.words import FILTERED

# One sample of every alternative of SECRET_RE (split so that no scanner takes the test for a leak).
SHAPES = {
    "stacklens app key": "stacklens_app_" + "Ab3dEfGhIjKlMnOpQrStUvWx",
    "stacklens api key": "stacklens_api_" + "0123456789abcdefghijABCDEFGHIJkl",
    "stacklens personal token": "stacklens_pat_" + "Qm9vT2tlbl9mb3JfYV90ZXN0X29ubHlfMTIzNDU2Nzg",
    "stacklens oauth access token": "stacklens_oat_" + "x-9_Zm9yX2FuX2FnZW50X3Rlc3Rfb25seV8xMjM0NTY",
    "stacklens oauth refresh token": "stacklens_ort_" + "cmVmcmVzaF9mb3JfYV90ZXN0X29ubHlfMTIzNDU2Nzg",
    "aws access key": "AKIA" + "IOSFODNN7EXAMPLE",
    "aws session key": "ASIA" + "IOSFODNN7EXAMPLE",
    "github token": "ghs_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "github fine-grained token": "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
    "slack token": "xoxb-" + "123456789012-123456789012-AbCdEfGhIjKlMnOp",
    "stripe key": "rk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "gitlab token": "glpat-" + "abcdefghij0123456789",
    "google api key": "AIza" + "SyA1234567890abcdefghijklmnopqrstuv",
    "jwt with a key id first": "eyJraWQiOiIxIn0." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
    "private key": "-----BEGIN RSA PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END RSA PRIVATE KEY-----",
}
CASES = {
    "--app-key stacklens_app_" + "Ab3dEfGhIjKlMnOpQrStUvWx": "--app-key " + FILTERED,
    "key=AKIA" + "IOSFODNN7EXAMPLE;": "key=" + FILTERED + ";",
    "Bearer eyJhbGciOiJIUzI1NiJ9."
    + "eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THs": "Bearer " + FILTERED,
    "redis://:s3cret-pass@cache:6379/0": "redis://:s3cret-pass@cache:6379/0",  # no user: not the shape
    "postgres://app:hunter2@db/x": "postgres://app:" + FILTERED + "@db/x",
    "plain words, https://example.com/a": "plain words, https://example.com/a",
    "stacklens_app_ is the prefix": "stacklens_app_ is the prefix",
    "ASIAN food": "ASIAN food",
    "eyJ alone": "eyJ alone",
}


@pytest.mark.parametrize("secret", SHAPES.values(), ids=SHAPES.keys())
def test_every_shape_is_redacted_and_holds_a_marker(secret: str) -> None:
    assert SECRET_RE.fullmatch(secret)
    assert any(marker in secret for marker in SECRET_MARKERS)
    assert redact_secrets(f"failed with {secret} twice") == f"failed with {FILTERED} twice"


@pytest.mark.parametrize(("text", "expected"), CASES.items())
def test_only_the_secret_part_of_a_text_goes(text: str, expected: str) -> None:
    assert redact_secrets(text) == expected


@pytest.mark.parametrize("secret", list(SHAPES.values()), ids=list(SHAPES))
def test_a_lines_redactor_redacts_its_strings_as_the_full_search_does(secret: str) -> None:
    """The redactor of a raw JSON text searches only the markers the text holds: every string of the text
    comes out as :func:`redact_secrets` makes it, whichever shape the text holds, and beside the line's own
    key (the usual reason a line is walked at all)."""
    own_key = "stacklens_app_" + "LineOwnKey0123456789"
    strings = [
        "checkout failed",
        f"token={secret}",
        f"--app-key {own_key}",
        "https://user:hunter2@db.internal/orders",
        "gho_short",
    ]
    raw = json.dumps({"app_key": own_key, "strings": strings}).encode()
    redact = redactor_for(raw)
    assert [redact(text) for text in strings] == [redact_secrets(text) for text in strings]
    assert FILTERED in redact(f"token={secret}")


def test_a_marker_spelled_with_an_escape_is_still_searched_for() -> None:
    key = "stacklens_api_" + "0123456789abcdefghijABCDEFGHIJkl"
    raw = json.dumps({"note": "AKIA", "v": key}).encode().replace(b"stacklens_api_", b"stacklens\\u005fapi_")
    assert json.loads(raw)["v"] == key and b"stacklens_ap" not in raw
    assert redactor_for(raw)(key) == FILTERED
