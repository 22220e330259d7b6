"""The one definition of the key formats, as the service, the shipper and the SDK read it."""

from __future__ import annotations

import pytest

from stacklens_contract.keys import is_api_key, is_app_key, service_of

API = "stacklens_api_" + "A1b2" * 8
APP = "stacklens_app_" + "Z9y8" * 6


@pytest.mark.parametrize(
    ("value", "api", "app", "service"),
    [
        (API, True, False, None),
        (APP, False, True, None),
        ("stacklens_app_worker_" + "Z9y8" * 6, False, True, "worker"),
        ("stacklens_app_api-gateway-2_" + "Z9y8" * 6, False, True, "api-gateway-2"),
        (API[:-1], False, False, None),  # one character short
        (APP + "x", False, False, None),
        ("stacklens_app_Worker_" + "Z9y8" * 6, False, False, None),  # services are lower-case
        ("stacklens_app_" + "Z9y8" * 5 + "Z9y!", False, False, None),
        (" " + API, False, False, None),
        (None, False, False, None),
    ],
)
def test_key_shapes(value: object, api: bool, app: bool, service: str | None) -> None:
    assert (is_api_key(value), is_app_key(value), service_of(value)) == (api, app, service)
