"""What a feedback says, read from the three ways it arrives (docs/feedback.md).

- the ``feedback`` envelope item of the SDKs' feedback widget: an event whose ``contexts.feedback`` holds
  ``message``, ``name``, ``contact_email``, ``url``, ``associated_event_id`` and ``replay_id``;
- the older ``user_report`` item: ``{"event_id", "name", "email", "comments"}``;
- the crash-report dialog's form (``name``, ``email``, ``comments``, with the event id in its URL).

A feedback without a message, or with a message over :data:`MAX_MESSAGE_CHARS`, is refused with the reason,
as Relay and Sentry refuse it; the other fields are cut to their column's size.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from typing import Any

from stacklens.ingest import timeparse
from stacklens.ingest.scrub import scrub_payload
from stacklens.scrubbing.apply import NO_RULES, ScrubRules

# Sentry's `feedback.message.max-size`: a longer message is refused, not cut.
MAX_MESSAGE_CHARS = 4096
_NAME_CHARS = 200
_EMAIL_CHARS = 200
_URL_CHARS = 2000

NO_MESSAGE = "feedback_no_message"
MESSAGE_TOO_LARGE = "feedback_too_large"


class FeedbackRefused(ValueError):
    """A feedback that cannot be kept: ``status`` 400 (no message, not an object) or 413 (message too long);
    ``reason`` is the outcome's reason code."""

    def __init__(self, status: int, reason: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason


@dataclass(frozen=True)
class FeedbackIn:
    """One feedback as it will be stored (scrubbed): ids are 32 lower-case hex digits or ''."""

    feedback_id: str
    source: str  # feedback | user_report | dialog
    event_id: str
    replay_id: str
    name: str
    email: str
    message: str
    url: str = ""
    release: str = ""
    environment: str = ""
    # When the person sent it (the widget item's ``timestamp``, epoch seconds); None: when it arrived.
    sent_at: float | None = None


def hex_id(value: Any) -> str:
    """An event or replay id as 32 lower-case hex digits ('' when it is not one)."""
    if not isinstance(value, str):
        return ""
    try:
        return uuid.UUID(value.strip()).hex
    except ValueError:
        return ""


def _text(value: Any, limit: int) -> str:
    return value.strip()[:limit] if isinstance(value, str) else ""


def _message(value: Any) -> str:
    message = value.strip() if isinstance(value, str) else ""
    if not message:
        raise FeedbackRefused(400, NO_MESSAGE, "the feedback has no message: a feedback needs one")
    if len(message) > MAX_MESSAGE_CHARS:
        raise FeedbackRefused(
            413,
            MESSAGE_TOO_LARGE,
            f"the feedback message has {len(message)} characters; at most {MAX_MESSAGE_CHARS} are accepted",
        )
    return message


def _scrubbed(feedback: FeedbackIn, rules: ScrubRules = NO_RULES) -> FeedbackIn:
    """The feedback through the service's scrubbing (secrets, card numbers; stacklens.ingest.scrub), as an
    event's ``user`` and ``contexts`` go through it: what a person typed is stored as an event would be; then
    through the project's ``rules`` (docs/scrubbing.md), which see the same shape."""
    shaped = {
        "user": {"name": feedback.name, "email": feedback.email},
        "contexts": {"feedback": {"message": feedback.message, "url": feedback.url}},
    }
    out = rules.apply(scrub_payload(shaped))
    user, context = out.get("user") or {}, (out.get("contexts") or {}).get("feedback") or {}
    return replace(
        feedback,
        name=str(user.get("name", "")),
        email=str(user.get("email", "")),
        message=str(context.get("message", "")),
        url=str(context.get("url", "")),
    )


def with_rules(feedback: FeedbackIn, rules: ScrubRules) -> FeedbackIn:
    """The feedback through its project's scrubbing rules too (``user.name``, ``user.email``,
    ``contexts.feedback.message``, ``contexts.feedback.url``), once its project is known."""
    return _scrubbed(feedback, rules) if rules.rules else feedback


def feedback_item(payload: Any, envelope_event_id: Any = None) -> FeedbackIn:
    """The feedback of a ``feedback`` item (the SDKs' widget, ``Sentry.captureFeedback``)."""
    if not isinstance(payload, dict):
        raise FeedbackRefused(400, NO_MESSAGE, "a feedback item is a JSON object")
    contexts = payload.get("contexts")
    context = contexts.get("feedback") if isinstance(contexts, dict) else None
    if not isinstance(context, dict):
        raise FeedbackRefused(
            400, NO_MESSAGE, "the feedback item has no contexts.feedback: a feedback needs one"
        )
    replay = contexts.get("replay") if isinstance(contexts, dict) else None
    replay_id = hex_id(context.get("replay_id")) or (
        hex_id(replay.get("replay_id")) if isinstance(replay, dict) else ""
    )
    found = payload.get("user")
    user: dict[str, Any] = found if isinstance(found, dict) else {}
    feedback_id = hex_id(payload.get("event_id")) or hex_id(envelope_event_id) or uuid.uuid4().hex
    return _scrubbed(
        FeedbackIn(
            feedback_id=feedback_id,
            source="feedback",
            event_id=hex_id(context.get("associated_event_id")),
            replay_id=replay_id,
            name=_text(context.get("name") or user.get("name") or user.get("username"), _NAME_CHARS),
            email=_text(context.get("contact_email") or user.get("email"), _EMAIL_CHARS),
            message=_message(context.get("message")),
            url=_text(context.get("url"), _URL_CHARS),
            release=_text(payload.get("release"), 200),
            environment=_text(payload.get("environment"), 64),
            sent_at=timeparse.to_epoch(payload.get("timestamp")),
        )
    )


def user_report(payload: Any) -> FeedbackIn:
    """The feedback of a ``user_report`` item (``{"event_id", "name", "email", "comments"}``)."""
    if not isinstance(payload, dict):
        raise FeedbackRefused(400, NO_MESSAGE, "a user report is a JSON object")
    event_id = hex_id(payload.get("event_id"))
    return _scrubbed(
        FeedbackIn(
            # One report per event, as Sentry keeps one: a report sent again replaces nothing, lands once.
            feedback_id=event_id or uuid.uuid4().hex,
            source="user_report",
            event_id=event_id,
            replay_id="",
            name=_text(payload.get("name"), _NAME_CHARS),
            email=_text(payload.get("email"), _EMAIL_CHARS),
            message=_message(payload.get("comments")),
        )
    )


def dialog_report(event_id: str, name: Any, email: Any, comments: Any, url: Any = "") -> FeedbackIn:
    """The feedback of the crash-report dialog's form."""
    return _scrubbed(
        FeedbackIn(
            feedback_id=uuid.uuid4().hex,
            source="dialog",
            event_id=hex_id(event_id),
            replay_id="",
            name=_text(name, _NAME_CHARS),
            email=_text(email, _EMAIL_CHARS),
            message=_message(comments),
            url=_text(url, _URL_CHARS),
        )
    )
