"""The shop attaches the order to a declined payment's error, as `scope.add_attachment` does in a Sentry SDK
(docs/feedback.md).

The shop's errors travel as lines of its log files, which carry no files; the attachment goes as native
SDKs send a minidump after its event: an envelope of its own, with the event's id, posted to the StackLens
envelope endpoint of the shop's DSN (`STACKLENS_DEMO_ENVELOPE_URL`, set by `stacklens up`). Without it,
nothing is attached. The order's card number is never in it.
"""

from __future__ import annotations

import json
import logging
import threading
from datetime import UTC, datetime

import httpx

ENVELOPE_URL_ENV = "STACKLENS_DEMO_ENVELOPE_URL"
logger = logging.getLogger(__name__)
_target: dict[str, str] = {}


def configure(envelope_url: str | None, app_key: str) -> None:
    """Where attachments go (the shop's DSN); an empty URL turns them off."""
    _target.clear()
    if envelope_url:
        _target.update(url=envelope_url, key=app_key)


def attachment_envelope(
    event_id: str, filename: str, content_type: str, data: bytes, sent_at: datetime | None = None
) -> bytes:
    """An envelope of one attachment; its header's ``sent_at`` is the moment it stands for (a history
    request's demo clock, else now), so StackLens keeps it under its event's time, as an SDK's would be."""
    moment = (sent_at or datetime.now(UTC)).astimezone(UTC).isoformat().replace("+00:00", "Z")
    header = {"event_id": event_id, "sent_at": moment}
    item = {"type": "attachment", "length": len(data), "filename": filename, "content_type": content_type}
    return b"\n".join([json.dumps(header).encode(), json.dumps(item).encode(), data]) + b"\n"


def attach(
    event_id: str | None, filename: str, content_type: str, data: bytes, sent_at: datetime | None = None
) -> None:
    """Send ``data`` as an attachment of the event ``event_id`` (in the background: never slows a request)."""
    if not event_id or not _target:
        return
    url, key = _target["url"], _target["key"]
    body = attachment_envelope(event_id, filename, content_type, data, sent_at)

    def post() -> None:
        try:
            answer = httpx.post(url, params={"sentry_key": key}, content=body, timeout=10.0)
            if answer.status_code != 200:
                logger.warning("attachment refused: %s %s", answer.status_code, answer.text[:200])
        except httpx.HTTPError as exc:
            logger.warning("attachment not sent: %s", exc)

    threading.Thread(target=post, name="shop-attachment", daemon=True).start()
