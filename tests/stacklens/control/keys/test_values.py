from __future__ import annotations

import hashlib
import re

import pytest

from stacklens.control.keys import values as key_values
from stacklens.settings import Settings
from stacklens_contract.keys import is_api_key, is_app_key, service_of


def test_api_key_format_and_randomness() -> None:
    values = {key_values.generate_api_key() for _ in range(200)}
    assert len(values) == 200
    for value in values:
        assert re.fullmatch(r"stacklens_api_[A-Za-z0-9]{32}", value)
        assert is_api_key(value) and not is_app_key(value)


def test_app_key_formats_and_service_parsing() -> None:
    primary = key_values.generate_app_key()
    assert re.fullmatch(r"stacklens_app_[A-Za-z0-9]{24}", primary)
    assert service_of(primary) is None
    worker = key_values.generate_app_key("worker")
    assert re.fullmatch(r"stacklens_app_worker_[A-Za-z0-9]{24}", worker)
    assert service_of(worker) == "worker"
    underscored = key_values.generate_app_key("order_mail_2")
    assert service_of(underscored) == "order_mail_2", "the service is all up to the last '_'"
    dashed = "stacklens_app_api-gateway-2_" + "A1" * 12  # made before DSNs: still accepted
    assert service_of(dashed) == "api-gateway-2"
    for value in (primary, worker, underscored, dashed):
        assert is_app_key(value) and not is_api_key(value)


@pytest.mark.parametrize("service", ["", "Worker", "9lives", "api-gateway", "a" * 32, "wörker", "a b"])
def test_invalid_service_names_are_refused(service: str) -> None:
    with pytest.raises(ValueError, match="invalid service name"):
        key_values.generate_app_key(service)


@pytest.mark.parametrize(
    "value",
    [
        "",
        "stacklens_api_",
        "stacklens_api_" + "a" * 31,
        "stacklens_api_" + "a" * 33,
        "stacklens_api_" + "a" * 31 + "!",
        "stacklens_api_" + "a" * 32 + " ",
        " stacklens_api_" + "a" * 32,
        "other_api_" + "a" * 32,
        None,
        42,
    ],
)
def test_malformed_api_keys_are_not_api_keys(value: object) -> None:
    assert not is_api_key(value)


def test_hash_is_sha256_hex() -> None:
    value = key_values.generate_api_key()
    assert key_values.hash_key(value) == hashlib.sha256(value.encode()).hexdigest()
    assert key_values.hash_key(value) != key_values.hash_key(value + "x")


def test_mask_shows_prefix_and_last_four_only() -> None:
    value = key_values.generate_app_key("worker")
    masked = key_values.mask_key(value)
    assert masked.startswith("stacklens_app_worker_") and masked.endswith(value[-4:])
    assert value[21:-4] not in masked


def test_encryption_round_trip(settings: Settings) -> None:
    value = key_values.generate_api_key()
    token = key_values.encrypt_value(value, settings)
    assert value not in token
    assert key_values.encrypt_value(value, settings) != token  # random IV: equal values do not look equal
    assert key_values.decrypt_value(token, settings) == value


def test_decryption_with_another_secret_fails_clearly(settings: Settings) -> None:
    token = key_values.encrypt_value("stacklens_api_x", settings)
    other = settings.model_copy(update={"secret_key": type(settings.secret_key)("another-secret-0123456789")})
    with pytest.raises(key_values.KeyDecryptionError, match="server secret changed"):
        key_values.decrypt_value(token, other)
    with pytest.raises(key_values.KeyDecryptionError):
        key_values.decrypt_value("not a token", settings)
