"""Generic webhooks signed per the Standard Webhooks specification.

Headers ``webhook-id`` (the outbox id: the same on every retry, so receivers deduplicate by it),
``webhook-timestamp`` (unix seconds of this attempt) and ``webhook-signature: v1,<base64 HMAC-SHA256 of
"<id>.<timestamp>.<body>">`` keyed with the base64-decoded part of the ``whsec_…`` secret. The body is
versioned JSON: ``{"version": 1, "type": "alert.firing", "id", "timestamp", "data": {…}}``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from datetime import UTC, datetime
from typing import Any

from stacklens.alerts.channels.base import Message, SendResult
from stacklens.alerts.channels.slack import post_json
from stacklens.outbound import OutboundClient

SECRET_PREFIX = "whsec_"
BODY_VERSION = 1


def generate_secret() -> str:
    """``whsec_`` + base64 of 24 random bytes (192 bits), the form Standard Webhooks libraries accept."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(24)).decode()


def sign(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` header value for one attempt."""
    key = base64.b64decode(secret.removeprefix(SECRET_PREFIX))
    signed = f"{msg_id}.{timestamp}.".encode() + body
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


def webhook_body(message: Message) -> dict[str, Any]:
    return {
        "version": BODY_VERSION,
        "type": f"alert.{message.kind}",
        "id": message.id,
        "timestamp": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "data": {"subject": message.subject, "text": message.text, "link": message.link, **message.data},
    }


class WebhookChannel:
    def __init__(self, url: str, secret: str, client: OutboundClient) -> None:
        self.url = url
        self.secret = secret
        self.client = client

    def send(self, message: Message) -> SendResult:
        body = json.dumps(webhook_body(message), separators=(",", ":")).encode()
        timestamp = int(time.time())
        headers = {
            "content-type": "application/json",
            "user-agent": "StackLens-Webhooks/1",
            "webhook-id": message.id,
            "webhook-timestamp": str(timestamp),
            "webhook-signature": sign(self.secret, message.id, timestamp, body),
        }
        return post_json(self.client, self.url, body, headers)
