"""Key values: generation, hashing for lookup, masking for lists, and encryption under the server secret (the
viewable copy of a key, and the stored secrets of alert channels and tracker integrations).

The key lifecycle over these values is :mod:`stacklens.control.keys.lifecycle`'.

The formats themselves (prefixes, lengths, service names) live in :mod:`stacklens_contract.keys`, shared
with the shipper and the SDK.
"""

from __future__ import annotations

import base64
import hashlib
import secrets

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from stacklens.errors import Conflict
from stacklens.settings import Settings
from stacklens_contract.keys import (
    API_KEY_PREFIX,
    API_KEY_RANDOM_LENGTH,
    APP_KEY_PREFIX,
    APP_KEY_RANDOM_LENGTH,
    APP_KEY_RE,
    BASE62,
    SERVICE_RE,
    SERVICE_RULE,
)

# Derivation context: changing it would make every stored encrypted copy unreadable.
_HKDF_INFO = b"stacklens key-encryption v1"


class KeyDecryptionError(Conflict, ValueError):
    """A stored key copy cannot be decrypted (the server secret changed since it was written)."""


def _random_base62(length: int) -> str:
    return "".join(secrets.choice(BASE62) for _ in range(length))


def generate_api_key() -> str:
    """A new API key value."""
    return API_KEY_PREFIX + _random_base62(API_KEY_RANDOM_LENGTH)


def validate_service(service: str) -> str:
    """``service`` when it is a valid service name, else ``ValueError`` with the rule in plain words."""
    if not isinstance(service, str) or not SERVICE_RE.fullmatch(service):
        raise ValueError(f"invalid service name {service!r}: use {SERVICE_RULE}")
    return service


def generate_app_key(service: str | None = None) -> str:
    """A new app key value: the primary form without ``service``, the per-service form with it."""
    middle = f"{validate_service(service)}_" if service is not None else ""
    return APP_KEY_PREFIX + middle + _random_base62(APP_KEY_RANDOM_LENGTH)


def hash_key(value: str) -> str:
    """SHA-256 hex of the full key value: what the control store looks keys up by."""
    return hashlib.sha256(value.encode("utf-8")).hexdigest()


def mask_key(value: str) -> str:
    """What lists show: the prefix (with service) and the last four characters."""
    match = APP_KEY_RE.fullmatch(value)
    if match:
        head = APP_KEY_PREFIX + (f"{match.group('service')}_" if match.group("service") else "")
    elif value.startswith(API_KEY_PREFIX):
        head = API_KEY_PREFIX
    else:
        head = ""
    return f"{head}…{value[-4:]}"


def _fernet(settings: Settings) -> Fernet:
    key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_HKDF_INFO).derive(settings.secret())
    return Fernet(base64.urlsafe_b64encode(key))


def encrypt_value(value: str, settings: Settings) -> str:
    """Encrypt a key value under the server secret (Fernet: AES-128-CBC + HMAC-SHA256)."""
    return _fernet(settings).encrypt(value.encode("utf-8")).decode("ascii")


def decrypt_value(token: str, settings: Settings) -> str:
    """Decrypt what :func:`encrypt_value` produced; :class:`KeyDecryptionError` when the secret differs."""
    try:
        return _fernet(settings).decrypt(token.encode("ascii")).decode("utf-8")
    except (InvalidToken, ValueError) as exc:
        raise KeyDecryptionError(
            "a stored key cannot be decrypted: the server secret changed; regenerate the key"
        ) from exc
