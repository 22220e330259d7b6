"""From the control store's rows to what a channel sends (:mod:`stacklens.alerts.outbox`): the channel a
channel row configures (its secret decrypted, its calls through the outbound guard) and the message a
notification row's stored payload holds."""

from __future__ import annotations

import base64

from stacklens.alerts.channels.base import Channel, Message
from stacklens.alerts.channels.email import EmailChannel
from stacklens.alerts.channels.slack import SlackChannel
from stacklens.alerts.channels.webhook import WebhookChannel
from stacklens.control.keys.values import decrypt_value
from stacklens.control.models.alerts import AlertChannel, AlertNotification
from stacklens.outbound import AllowList, OutboundClient
from stacklens.settings import Settings


def build_channel(row: AlertChannel, settings: Settings, client: OutboundClient | None = None) -> Channel:
    client = client or OutboundClient(allow=AllowList.parse(settings.outbound_allow))
    if row.type == "email":
        return EmailChannel(list(row.config.get("to", [])), settings.smtp_url, settings.mail_from)
    if row.type == "slack":
        return SlackChannel(row.config["url"], client)
    secret = decrypt_value(row.secret_encrypted or "", settings)
    return WebhookChannel(row.config["url"], secret, client)


def message_of(row: AlertNotification) -> Message:
    p = row.payload or {}
    if not isinstance(p, dict):
        raise ValueError(f"the notification's stored payload is a {type(p).__name__}, not an object")
    return Message(
        id=row.id,
        kind=row.kind,
        subject=str(p.get("subject", "")),
        text=str(p.get("text", "")),
        html=str(p.get("html", "")),
        link=str(p.get("link", "")),
        data=p["data"] if isinstance(p.get("data"), dict) else {},
        attachments=tuple(
            (str(a["filename"]), str(a["content_type"]), base64.b64decode(str(a["base64"])))
            for a in p.get("attachments") or []
            if isinstance(a, dict)
        ),
    )
