"""The spec's words, word for word: the API answers them, the shipper matches them, the SDK sends them."""

from __future__ import annotations

from stacklens_contract import words


def test_the_error_messages_of_the_spec() -> None:
    assert (
        words.INVALID_API_KEY,
        words.APPLICATION_NOT_FOUND,
        words.RATE_LIMITED,
        words.SERVICE_UNAVAILABLE,
        words.AUTHENTICATION_FAILED,
    ) == (
        "Invalid API Key",
        "Application Not Found",
        "Rate Limited",
        "Service Unavailable",
        "Authentication failed",
    )


def test_the_filtered_marker_and_the_breadcrumb_categories() -> None:
    assert words.FILTERED == "[FILTERED]"
    assert words.BREADCRUMB_CATEGORIES == ("navigation", "http", "ui", "console", "error")
