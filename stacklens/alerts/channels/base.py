"""What every channel receives (a :class:`Message`) and answers (a :class:`SendResult`).

A channel sends one message once; retrying, backoff, leases and the delivery log are the outbox's business.
Each channel decides which failures are worth retrying: timeouts, connection errors, 5xx and 429 are;
any other refusal (a 4xx, an SMTP 5xx, an address the SSRF guard refuses) is permanent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

CHANNEL_TYPES = ("email", "slack", "webhook")
# Per-channel rate caps (Slack asks for at most one message per second per webhook; 60 e-mails an hour
# keeps a mailbox readable): more messages than this are folded into one digest, never dropped.
RATE_CAPS: dict[str, tuple[int, float]] = {"slack": (1, 1.0), "email": (60, 3600.0), "webhook": (60, 60.0)}


@dataclass(frozen=True)
class Message:
    """One notification, already worded: what fired, value against threshold, since when, release, link."""

    id: str  # the outbox id: webhook-id, Message-ID, dedup key
    kind: str  # firing | resolved | renotify | test | digest
    subject: str
    text: str
    html: str
    link: str = ""
    data: dict[str, Any] = field(default_factory=dict)  # the versioned JSON body's "data"
    # Files e-mail attaches (a scheduled report's PDF): (file name, MIME type, bytes). Chat and webhook
    # channels send the text and link only.
    attachments: tuple[tuple[str, str, bytes], ...] = ()


@dataclass(frozen=True)
class SendResult:
    ok: bool
    retryable: bool = False
    status_code: int | None = None
    latency_ms: float = 0.0
    excerpt: str = ""
    error: str = ""
    retry_after_s: float | None = None


class Channel(Protocol):
    def send(self, message: Message) -> SendResult: ...
