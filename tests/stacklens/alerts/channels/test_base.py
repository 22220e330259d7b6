"""What every channel receives and answers, and the per-channel rate caps."""

from __future__ import annotations

import dataclasses

import pytest

from stacklens.alerts.channels.base import CHANNEL_TYPES, RATE_CAPS, Message, SendResult


def test_every_channel_type_has_a_rate_cap() -> None:
    assert set(RATE_CAPS) == set(CHANNEL_TYPES)
    # Slack asks for at most one message a second per webhook.
    assert RATE_CAPS["slack"] == (1, 1.0)
    assert all(count >= 1 and seconds > 0 for count, seconds in RATE_CAPS.values())


def test_a_message_is_worded_once_and_cannot_change() -> None:
    message = Message(id="n-1", kind="firing", subject="p75 LCP above 2.5 s", text="…", html="<p>…</p>")
    assert message.data == {} and message.link == ""
    with pytest.raises(dataclasses.FrozenInstanceError):
        message.subject = "other"  # frozen: the outbox sends what was stored
    assert Message(id="n-2", kind="test", subject="", text="", html="").data is not message.data


def test_a_result_is_a_failure_to_give_up_on_unless_said_otherwise() -> None:
    refused = SendResult(ok=False, status_code=404)
    assert not refused.retryable and refused.retry_after_s is None
