"""Application keys given to ``init``, checked against the shared key formats without any network round
trip."""

from __future__ import annotations

from stacklens_contract.keys import API_KEY_PREFIX, APP_KEY_PREFIX, SERVICE_RULE, is_app_key, service_of

__all__ = ["ConfigurationError", "check_app_key", "is_app_key", "service_of"]


class ConfigurationError(ValueError):
    """A value given to ``stacklens_sdk.init`` cannot work; the message names the fix."""


def check_app_key(value: object) -> str:
    """Return ``value`` when it is an application key; raise ``ConfigurationError`` naming the fix
    otherwise."""
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
            f"(service: {SERVICE_RULE}); copy it again from the project settings page"
        )
    return value
