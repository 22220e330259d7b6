"""The worded test notification: the channel named, the page linked, the HTML escaped."""

from __future__ import annotations

from stacklens.alerts.messages import KIND_WORDS, channel_test_payload


def test_a_channel_test_names_the_channel_and_links_its_page() -> None:
    payload = channel_test_payload("<Ops & on-call>", "https://lens.example", "acme")
    assert payload["subject"] == "[Test] StackLens channel <Ops & on-call>"
    assert payload["link"] == "https://lens.example/orgs/acme/settings/channels"
    assert "Open: https://lens.example/orgs/acme/settings/channels" in payload["text"]
    assert "<b>&lt;Ops &amp; on-call&gt;</b>" in payload["html"] and "<Ops" not in payload["html"]
    assert payload["data"] == {"test": True, "channel": "<Ops & on-call>"}
    assert KIND_WORDS["renotify"] == "Still firing"


def test_an_error_rate_rule_is_named_failed_transactions_everywhere() -> None:
    # The rule type keeps its stored name error_rate; what it measures is the catalog's
    # failed_transactions_pct, never called "error rate" (that is error_pct, the API calls answered 4xx or
    # 5xx).
    from dashboards.routers.alerts import condition
    from stacklens.alerts.messages import value_text, what
    from stacklens.alerts.rule_types import TYPE_LABELS
    from stacklens.control.models.alerts import AlertRule

    rule = AlertRule(type="error_rate", name="Failing", threshold=5.0, window_seconds=3600, environment="")
    assert what(rule) == ("Failed transactions", "%") and TYPE_LABELS["error_rate"] == "Failed transactions"
    assert value_text(rule, 7.5) == "7.5 %"
    assert condition(rule) == "Failed transactions > 5.0 % over 1h"
