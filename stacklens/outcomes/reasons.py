"""What an outcome's reason means, in plain words: the usage page shows it beside each count, so "245 errors
filtered by event_processor" says why. Reasons the service gives are its own constants
(:mod:`stacklens.outcomes.counting`); reasons SDKs report in their client reports are Relay's discard reasons,
kept as given. A reason outside both lists is an SDK's own word and is shown without an explanation."""

from __future__ import annotations

from stacklens.outcomes import counting

SERVICE_REASONS: dict[str, str] = {
    counting.UNREADABLE: "not a JSON log line, or a payload of the wrong shape",
    counting.UNKNOWN_APP_KEY: "the line's app key names no project of this organization",
    counting.LINE_TOO_LARGE: "the line is over the 1 MiB line limit",
    counting.REPLAY_DISABLED: "the project's settings turn replay ingest off",
    counting.NOT_STORED: "spans counted but not kept (only interaction spans with INP are stored)",
    counting.ATTACHMENT_QUOTA: "the project keeps as many attachment bytes as its quota allows",
    counting.ORG_QUOTA: "the organization's events-per-minute quota was spent",
    counting.PROJECT_QUOTA: "the project's own events-per-minute quota was spent",
    counting.CATEGORY_QUOTA: "the project's quota for this category was spent",
    counting.SPIKE_PROTECTION: "spike protection: far more than the project's usual rate arrived at once",
    counting.QUEUE_FULL: "the service's ingest queue was full (answered 503; the SDK or shipper retries)",
    counting.SPOOL_UNAVAILABLE: "the ingest spool could not be written (answered 503)",
    counting.WAREHOUSE_UNAVAILABLE: "the warehouse did not answer (answered 503)",
    counting.IDEMPOTENCY_KEY_REUSED: "a landed batch's Idempotency-Key came with other content (answered 409)",
    counting.INTERNAL: "the request ended before it was answered (cancelled or failed; see the server log)",
    counting.MALFORMED_ENVELOPE: "the envelope could not be read (answered 400)",
    counting.ENVELOPE_TOO_LARGE: "the envelope is over the size limit (answered 413)",
    counting.DISCARDS_OVER_BOUND: "a client report claimed more drops than an SDK can have made; only what is "
    "within the bounds was counted",
}

# Relay's client-report discard reasons: what the SDK itself did with items it never sent.
SDK_REASONS: dict[str, str] = {
    "before_send": "dropped by the application's before_send hook (reported by the SDK)",
    "event_processor": "dropped by an event processor or integration in the application, such as a filter "
    "for ignored errors (reported by the SDK)",
    "sample_rate": "not sent because of the SDK's sample rate (reported by the SDK)",
    "ratelimit_backoff": "held back by the SDK while StackLens asked it to wait (reported by the SDK)",
    "queue_overflow": "the SDK's send queue was full (reported by the SDK)",
    "cache_overflow": "the SDK's offline cache was full (reported by the SDK)",
    "buffer_overflow": "the SDK's buffer was full (reported by the SDK)",
    "network_error": "the SDK could not reach StackLens (reported by the SDK)",
    "send_error": "StackLens answered the SDK with an error (reported by the SDK)",
    "insufficient_data": "the SDK had too little data to send the item (reported by the SDK)",
    "backpressure": "the SDK slowed down under load (reported by the SDK)",
    "too_large": "the item was over the SDK's size limit (reported by the SDK)",
}


def explain(reason: str) -> str:
    """The plain words for ``reason``; ``""`` when it has none (an SDK's own reason)."""
    return SERVICE_REASONS.get(reason) or SDK_REASONS.get(reason, "")
