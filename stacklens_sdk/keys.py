"""Application-key shapes (DESIGN §4.3), checked without any network round trip."""

from __future__ import annotations

import re

APP_KEY_PREFIX = "stacklens_app_"
API_KEY_PREFIX = "stacklens_api_"

_BASE62 = "[0-9A-Za-z]{24}"
_SERVICE = "[a-z][a-z0-9-]{0,30}"
_APP_KEY = re.compile(rf"stacklens_app_(?:(?P<service>{_SERVICE})_)?(?P<secret>{_BASE62})")


class ConfigurationError(ValueError):
    """A value given to ``stacklens_sdk.init`` cannot work; the message names the fix."""


def service_of(app_key: str) -> str | None:
    """The service segment of a per-service key (``stacklens_app_worker_…`` → ``worker``), else None."""
    match = _APP_KEY.fullmatch(app_key)
    return match.group("service") if match else None


def is_app_key(value: object) -> bool:
    """True when ``value`` has the shape of a primary or per-service application key."""
    return isinstance(value, str) and _APP_KEY.fullmatch(value) is not None


def check_app_key(value: object) -> str:
    """Return ``value`` when it is an application key; raise ``ConfigurationError`` naming the fix otherwise."""
    if not isinstance(value, str) or not value:
        raise ConfigurationError(
            "app_key is required: pass the project's application key (stacklens_app_…) "
            "from the project settings page"
        )
    if value != value.strip():
        raise ConfigurationError("app_key has leading or trailing whitespace: remove it")
    if value.startswith(API_KEY_PREFIX):
        raise ConfigurationError(
            "app_key is an API key (stacklens_api_…), which belongs in the shipper's configuration only: "
            "pass the project's application key (stacklens_app_…) instead"
        )
    if not value.startswith(APP_KEY_PREFIX):
        raise ConfigurationError(
            f"app_key must start with {APP_KEY_PREFIX!r}: copy the application key from the project "
            "settings page"
        )
    if not is_app_key(value):
        raise ConfigurationError(
            "app_key is not a valid application key: expected stacklens_app_ followed by 24 letters or digits, "
            "or stacklens_app_<service>_ followed by 24 letters or digits for a per-service key "
            "(service: lower-case letters, digits and '-', starting with a letter); copy it again from the "
            "project settings page"
        )
    return value
