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
