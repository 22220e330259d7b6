"""Every reason the service gives has plain words, and the SDKs' discard reasons are explained as theirs."""

from __future__ import annotations

from stacklens.outcomes import counting
from stacklens.outcomes.reasons import explain


def test_every_reason_of_the_service_is_explained() -> None:
    constants = [
        value
        for name, value in vars(counting).items()
        if name.isupper() and isinstance(value, str) and not name.startswith("SDK_")
    ]
    assert len(constants) >= 15
    assert {c: explain(c) for c in constants if not explain(c)} == {}


def test_sdk_reasons_say_they_are_the_sdks_and_unknown_ones_have_no_words() -> None:
    assert "event processor" in explain("event_processor") and "reported by the SDK" in explain(
        "event_processor"
    )
    assert explain("sample_rate").endswith("(reported by the SDK)")
    assert explain("something_an_sdk_made_up") == ""
