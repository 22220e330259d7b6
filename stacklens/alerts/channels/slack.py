"""Slack incoming webhooks: ``{"text": …, "blocks": […]}`` posted to the hook URL through the outbound client.

Slack answers ``200 ok``; ``400 invalid_payload``, ``403``, ``404 no_service`` and ``410 channel_is_archived``
are final; ``429`` carries ``Retry-After``; 5xx is retried.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from stacklens.alerts.channels.base import Message, SendResult
from stacklens.outbound import DeadlinePassed, OutboundClient, OutboundRefused

_ICON = {
    "firing": ":red_circle:",
    "resolved": ":large_green_circle:",
    "renotify": ":red_circle:",
    "test": ":white_check_mark:",
    "digest": ":bell:",
}


def slack_body(message: Message) -> dict[str, Any]:
    """The Slack message: a fallback ``text`` (notifications, screen readers) and Block Kit blocks."""
    headline = f"{_ICON.get(message.kind, ':bell:')} *{_escape(message.subject)}*"
    body = _escape(message.text)
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": headline}},
        {"type": "section", "text": {"type": "mrkdwn", "text": body[:2900]}},
    ]
    if message.link:
        blocks.append(
            {
                "type": "context",
                "elements": [{"type": "mrkdwn", "text": f"<{message.link}|Open in StackLens>"}],
            }
        )
    return {"text": f"{message.subject}", "blocks": blocks}


def _escape(text: str) -> str:
    # Slack's mrkdwn treats these three as control characters; event data must not inject links or mentions.
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# A receiver's answer is only shown (an excerpt in the delivery log), so 64 KiB of it is plenty; the rest of a
# longer one is never read (the connection is closed), and its status alone says whether the message arrived:
# a 2xx with a long body (a receiver that echoes a page) is a delivery, not a failure (issue #62).
MAX_RECEIVER_ANSWER_BYTES = 64 * 1024


def post_json(client: OutboundClient, url: str, body: bytes, headers: dict[str, str]) -> SendResult:
    """POST through the outbound client and classify the answer (shared by Slack and webhooks)."""
    try:
        response = client.post(
            url, body, headers, max_answer_bytes=MAX_RECEIVER_ANSWER_BYTES, cut_answer=True
        )
    except OutboundRefused as exc:
        return SendResult(ok=False, retryable=False, error=str(exc))
    except DeadlinePassed as exc:
        return SendResult(ok=False, retryable=True, error=f"{exc}; retried later")
    except httpx.TimeoutException:
        return SendResult(
            ok=False, retryable=True, error=f"no answer within {client.timeout_s:g} s (timeout)"
        )
    except httpx.TransportError as exc:
        return SendResult(ok=False, retryable=True, error=f"cannot connect: {exc or type(exc).__name__}")
    except httpx.HTTPError as exc:  # the answer's body cannot be read (e.g. not in its Content-Encoding)
        return SendResult(
            ok=False,
            retryable=True,
            error=f"the receiver's answer cannot be read: {exc or type(exc).__name__}",
        )
    error = "" if response.ok else f"the receiver answered {response.status}"
    if 300 <= response.status < 400:
        error += " (a redirect; redirects are not followed: use the final URL)"
    return SendResult(
        ok=response.ok,
        retryable=response.retryable,
        status_code=response.status,
        latency_ms=response.latency_ms,
        excerpt=response.excerpt,
        error=error,
        retry_after_s=response.retry_after_s,
    )


class SlackChannel:
    def __init__(self, url: str, client: OutboundClient) -> None:
        self.url = url
        self.client = client

    def send(self, message: Message) -> SendResult:
        body = json.dumps(slack_body(message)).encode()
        return post_json(self.client, self.url, body, {"content-type": "application/json"})
