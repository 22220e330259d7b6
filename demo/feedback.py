"""What the shop's visitors write in the feedback widget after a JavaScript error, and how it reaches
StackLens (docs/feedback.md).

The shop's page runs `@sentry/browser` with `feedbackIntegration()`; some visitors who hit an error open the
widget and send a few words. The widget's envelope carries one `feedback` item (the message, the visitor's
name and e-mail, the page, the error it follows and the replay recording the session). The page's events go
through the shop's tunnel into log files, which carry no feedback, so the widget posts to the StackLens
envelope endpoint of the browser DSN, as a page with a DSN and no tunnel does (`STACKLENS_DEMO_ENVELOPE_URL`,
set by `stacklens up`). The history's visitors write too, at their moment: the item's `timestamp` is when
the feedback was written, and StackLens lists it then (as it stores an event under its own time).
"""

from __future__ import annotations

import json
import random
import uuid
from datetime import UTC, datetime
from typing import Any

import httpx

from demo.browser import SDK

ENVELOPE_URL_ENV = "STACKLENS_DEMO_ENVELOPE_URL"
# One visitor in three who saw an error writes something (the seeded choice is the error's own, so the rest of
# the demo's random stream is unchanged).
SHARE = 3
MESSAGES = {
    "TypeError": (
        "The price disappeared when I changed the lens colour.",
        "Product page shows no price, I can't add it to my cart.",
    ),
    "ReferenceError": (
        "Clicking 'Add to cart' did nothing the first time.",
        "Had to press the button twice before the cart updated.",
    ),
    "Error": (
        "I typed 2 in quantity and it said the number is not positive?",
        "Quantity box refuses my number.",
    ),
}
NAMES = (("Mara Quinn", "mara.quinn@example.com"), ("Tomás Ruiz", "tomas@example.org"), ("", ""))


def writes_feedback(error: dict[str, Any]) -> bool:
    """Whether the visitor who hit ``error`` sends feedback (decided by the error's id)."""
    return random.Random(error["event_id"]).randrange(SHARE) == 0


def feedback_envelope(dsn: str, error: dict[str, Any], now: datetime) -> bytes:
    """The envelope the feedback widget posts after ``error``: one `feedback` item as `@sentry/browser` 10
    builds it (its `contexts.feedback`, the page's request, the release and environment of the page)."""
    rng = random.Random(error["event_id"] + "/feedback")
    kind = str(error["exception"]["values"][0]["type"])
    name, email = rng.choice(NAMES)
    feedback_id = uuid.UUID(int=rng.getrandbits(128), version=4).hex
    url = str((error.get("request") or {}).get("url") or "")
    context: dict[str, Any] = {
        "message": rng.choice(MESSAGES.get(kind, MESSAGES["Error"])),
        "url": url,
        "source": "widget",
        "associated_event_id": error["event_id"],
    }
    if name:
        context |= {"name": name, "contact_email": email}
    replay_id = (error.get("tags") or {}).get("replayId")
    if replay_id:
        context["replay_id"] = replay_id
    item = {
        "type": "feedback",
        "event_id": feedback_id,
        "timestamp": now.timestamp(),
        "platform": "javascript",
        "level": "info",
        "release": error.get("release"),
        "environment": error.get("environment"),
        "request": {"url": url, "headers": (error.get("request") or {}).get("headers") or {}},
        "contexts": {"feedback": context},
        "sdk": SDK,
    }
    body = json.dumps(item)
    header = {
        "event_id": feedback_id,
        "sent_at": now.isoformat().replace("+00:00", "Z"),
        "sdk": SDK,
        "dsn": dsn,
    }
    return (
        "\n".join(
            [json.dumps(header), json.dumps({"type": "feedback", "length": len(body.encode())}), body]
        ).encode()
        + b"\n"
    )


def send_feedback(envelope_url: str, dsn: str, error: dict[str, Any], at: datetime | None = None) -> str:
    """Post the widget's feedback for ``error``, written at ``at`` (default now: a history's feedback is
    written at its moment); "" when StackLens accepted it, else why not."""
    key = dsn.split("//", 1)[1].split("@", 1)[0]
    try:
        answer = httpx.post(
            envelope_url,
            params={"sentry_key": key},
            content=feedback_envelope(dsn, error, at or datetime.now(UTC)),
            headers={"content-type": "text/plain;charset=UTF-8"},
            timeout=10.0,
        )
    except httpx.HTTPError as exc:
        return f"the feedback could not be sent: {exc}"
    return (
        "" if answer.status_code == 200 else f"StackLens answered {answer.status_code}: {answer.text[:200]}"
    )
