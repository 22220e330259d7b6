"""Key formats (docs/architecture.md §11.3): the one definition the service, the shipper and the SDK check
keys against.

API key ``stacklens_api_`` + 32 base62; app key ``stacklens_app_`` [+ ``<service>_``] + 24 base62. New service
names are ``[a-z][a-z0-9_]{0,30}`` so that every key can be a DSN's public key (docs/architecture.md §11.4);
keys made before that may hold ``-`` and keep working. The random part has no ``_``, so a key parses one way
only: the service is everything between the prefix and the last ``_``.
"""

from __future__ import annotations

import re
import string

API_KEY_PREFIX = "stacklens_api_"
APP_KEY_PREFIX = "stacklens_app_"
API_KEY_RANDOM_LENGTH = 32  # 32 × log2(62) ≈ 190 bits: unguessable
APP_KEY_RANDOM_LENGTH = 24  # ≈ 143 bits: an identifier, still not enumerable
BASE62 = string.ascii_letters + string.digits
SERVICE_RE = re.compile(r"[a-z][a-z0-9_]{0,30}")  # what a new key's service may be
# The rule of SERVICE_RE in plain words, for messages.
SERVICE_RULE = "a lower-case letter, then up to 30 of a-z, 0-9 and '_' (a DSN's public key allows no '-')"
# What an existing key's service may hold: keys made before DSNs may carry '-'.
ACCEPTED_SERVICE = r"[a-z][a-z0-9_-]{0,30}"

API_KEY_RE = re.compile(rf"{API_KEY_PREFIX}[A-Za-z0-9]{{{API_KEY_RANDOM_LENGTH}}}")
APP_KEY_RE = re.compile(
    rf"{APP_KEY_PREFIX}(?:(?P<service>{ACCEPTED_SERVICE})_)?(?P<secret>[A-Za-z0-9]{{{APP_KEY_RANDOM_LENGTH}}})"
)


def is_api_key(value: object) -> bool:
    """True when ``value`` has the shape of an API key."""
    return isinstance(value, str) and API_KEY_RE.fullmatch(value) is not None


def is_app_key(value: object) -> bool:
    """True when ``value`` has the shape of a primary or per-service application key."""
    return isinstance(value, str) and APP_KEY_RE.fullmatch(value) is not None


def service_of(value: object) -> str | None:
    """The service segment of a per-service app key (``stacklens_app_worker_…`` → ``worker``); ``None`` for a
    primary key or a value that is not an app key."""
    match = APP_KEY_RE.fullmatch(value) if isinstance(value, str) else None
    return match.group("service") if match else None
