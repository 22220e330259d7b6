"""From stored rows to what a channel sends (stacklens/alerts/channel_rows.py): a notification row's payload
becomes its message, a malformed one is refused with its reason, and an e-mail channel row becomes its
channel."""

from __future__ import annotations

import base64

import pytest

from stacklens.alerts.channel_rows import build_channel, message_of
from stacklens.alerts.channels.email import EmailChannel
from stacklens.control.models.alerts import AlertChannel, AlertNotification
from stacklens.settings import Settings


def test_a_notification_row_becomes_its_message() -> None:
    pdf = {
        "filename": "report.pdf",
        "content_type": "application/pdf",
        "base64": base64.b64encode(b"%PDF").decode(),
    }
    payload = {
        "subject": "LCP above 2.5 s",
        "text": "t",
        "html": "<p>t</p>",
        "data": {"v": 1},
        "attachments": [pdf, "x"],
    }
    message = message_of(AlertNotification(id="msg_1", kind="firing", payload=payload))
    assert (message.id, message.kind, message.subject, message.link, message.data) == (
        "msg_1",
        "firing",
        "LCP above 2.5 s",
        "",
        {"v": 1},
    )
    assert message.attachments == (("report.pdf", "application/pdf", b"%PDF"),)
    with pytest.raises(ValueError, match="stored payload is a list, not an object"):
        message_of(AlertNotification(id="msg_2", kind="firing", payload=[1]))


def test_an_email_channel_row_becomes_an_email_channel(settings: Settings) -> None:
    row = AlertChannel(type="email", config={"to": ["ops@example.com"]})
    channel = build_channel(row, settings)
    assert isinstance(channel, EmailChannel) and channel.to == ["ops@example.com"]
