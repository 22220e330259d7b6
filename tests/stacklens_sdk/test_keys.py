"""``init``'s application key check: every wrong value is refused with the fix, before any network call."""

from __future__ import annotations

import pytest

from stacklens_sdk.keys import ConfigurationError, check_app_key

APP_KEY = "stacklens_app_" + "a1B2c3D4e5F6g7H8i9J0k1L2"


@pytest.mark.parametrize(
    ("value", "names"),
    [
        (None, "app_key is required"),
        ("", "app_key is required"),
        (f" {APP_KEY}", "leading or trailing whitespace"),
        ("stacklens_api_" + "x" * 32, "is an API key"),
        ("sk_live_" + "x" * 24, "must start with 'stacklens_app_'"),
        ("stacklens_app_short", "not a valid application key"),
    ],
)
def test_a_wrong_key_is_refused_with_the_fix(value: object, names: str) -> None:
    with pytest.raises(ConfigurationError, match=names):
        check_app_key(value)


def test_project_and_per_service_keys_pass() -> None:
    assert check_app_key(APP_KEY) == APP_KEY
    per_service = "stacklens_app_checkout_" + "Z" * 24
    assert check_app_key(per_service) == per_service
