"""Categories, outcomes and reasons: the words of an outcome, and the counts one request makes.

Every item that reaches an entrance is counted once under (project, category, outcome, reason); the
organization and the hour are added when the counts are tallied (:mod:`stacklens.outcomes.tally`). An item's
category is its data category as Sentry names it; its outcome says what the service did with it and its reason
why, as a short code (docs/decisions.md lists them).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

CATEGORIES = (
    "error",
    "transaction",
    "span",
    "session",
    "log",
    "replay",
    "attachment",
    "feedback",
    "client_report",
)
OUTCOMES = ("accepted", "filtered", "rate_limited", "invalid", "too_large", "dropped")

# (project id, category, outcome, reason) → quantity. Project 0: the item's app key names no project of the
# organization (it still reached the entrance and is counted).
OutcomeKey = tuple[int, str, str, str]
Outcomes = Counter[OutcomeKey]

# A log line's item type → its category. A replay segment arrives as two lines (its `replay_event` and its
# `replay_recording`); the recording counts the segment once, as Relay counts one replay item.
LINE_CATEGORIES: dict[str, str] = {
    "event": "error",
    "transaction": "transaction",
    "span": "span",
    "session": "session",
    "sessions": "session",
    "log": "log",
    "replay_recording": "replay",
    "client_report": "client_report",
    "attachment": "attachment",
    # User feedback: the widget's item and the older user report (Sentry's `feedback` data category).
    "feedback": "feedback",
    "user_report": "feedback",
}

# Reasons the service gives.
UNREADABLE = "unreadable"  # not a JSON log line, or a payload of the wrong shape
UNKNOWN_APP_KEY = "unknown_app_key"
LINE_TOO_LARGE = "line_too_large"
REPLAY_DISABLED = "replay_disabled"  # the project's setting turned replay ingest off
NOT_STORED = "not_stored"  # spans without INP: counted, not kept
ATTACHMENT_QUOTA = "attachment_quota"  # the project keeps as many attachment bytes as it may
ORG_QUOTA = "org_quota"
PROJECT_QUOTA = "project_quota"
CATEGORY_QUOTA = "category_quota"
SPIKE_PROTECTION = "spike_protection"
# A request refused or lost after its admission (stacklens.outcomes.managed), its items that would land:
QUEUE_FULL = "queue_full"  # the front door holds as many rows as it may (503)
SPOOL_UNAVAILABLE = "spool_unavailable"  # the spool's journal could not be written (503)
WAREHOUSE_UNAVAILABLE = "warehouse_unavailable"  # the accept group's look-up failed (503)
IDEMPOTENCY_KEY_REUSED = "idempotency_key_reused"  # a landed batch's key with another body (409)
INTERNAL = "internal"  # dropped without an answer: a request cancelled before the door had it, a failure
# An envelope refused whole (400/413) once its key is known: its items, as far as their headers can be read.
MALFORMED_ENVELOPE = "malformed_envelope"
ENVELOPE_TOO_LARGE = "envelope_too_large"
# A client report that claimed more than an SDK can have dropped (see the bounds below): the report is counted
# under this reason instead of accepted, and only what is within the bounds is added.
DISCARDS_OVER_BOUND = "discards_over_bound"

# The SDKs' data categories (sentry-python's `DataCategory`, Relay's names) → ours; others (profile, monitor,
# …) are outside the outcome categories and not counted.
SDK_CATEGORIES: dict[str, str] = {
    "error": "error",
    "default": "error",
    "security": "error",
    "transaction": "transaction",
    "span": "span",
    "session": "session",
    "log_item": "log",
    "replay": "replay",
    "attachment": "attachment",
    "feedback": "feedback",
    "user_report_v2": "feedback",
}
# Ours → the names an SDK reads in X-Sentry-Rate-Limits (sentry-python names log records `log_item`).
RATE_LIMIT_NAMES: dict[str, str] = {
    "error": "error",
    "transaction": "transaction",
    "span": "span",
    "session": "session",
    "log": "log_item",
    "replay": "replay",
    "attachment": "attachment",
}
# An SDK's discard reason (Relay's client-report reasons) → the outcome it stands for; the reason itself is
# kept as given. Any other reason is a loss in the SDK (`dropped`).
DISCARD_OUTCOMES: dict[str, str] = {
    "ratelimit_backoff": "rate_limited",
    "sample_rate": "filtered",
    "before_send": "filtered",
    "event_processor": "filtered",
    "insufficient_data": "filtered",
    "too_large": "too_large",
}
MAX_REASON = 64
# What one client report may add. An SDK sends one every few seconds to a minute (sentry-python: at most every
# 30 s, or when it flushes) with what it dropped since the last one: a busy process sampling transactions at
# 1 % drops a few thousand a second at most. Quantities are the SDK's word, unauthenticated beyond the public
# DSN key, so they are bounded: an entry adds at most MAX_DISCARD_QUANTITY, a report at most
# MAX_DISCARDS_PER_REPORT over at most MAX_DISCARD_ENTRIES (category, reason) entries; the rest is not added
# and the report counts under DISCARDS_OVER_BOUND. Per project, client reports add at most
# stacklens.outcomes.tally.MAX_DISCARDS_PER_MINUTE a minute (docs/security.md).
MAX_DISCARD_QUANTITY = 100_000
MAX_DISCARDS_PER_REPORT = 1_000_000
MAX_DISCARD_ENTRIES = 32
# Marks the reason of a quantity an SDK reported (not an item the service saw) until it is tallied, where the
# per-project bound applies and the mark is removed (stacklens.outcomes.tally). Never in a reason as stored:
# reasons from SDKs are cut to printable characters.
SDK_MARK = "\x1f"


def category_of(item_type: str) -> str | None:
    """The category a line of ``item_type`` counts under, or None for a type outcomes do not count."""
    return LINE_CATEGORIES.get(item_type)


def client_discards(project_id: int, payload: Mapping[str, Any]) -> Outcomes:
    """What an SDK's ``client_report`` says it dropped itself: its ``discarded_events`` by category and
    reason, within the bounds above. Entries that are not well formed, or of a category outside ours, are
    left out. A report over a bound moves itself from ``accepted`` to :data:`DISCARDS_OVER_BOUND` (its caller
    counted it accepted). Each reason carries :data:`SDK_MARK` until it is tallied."""
    counts: Outcomes = Counter()
    entries = payload.get("discarded_events")
    room = MAX_DISCARDS_PER_REPORT
    over = False
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        category = SDK_CATEGORIES.get(str(entry.get("category")))
        reason = entry.get("reason")
        quantity = entry.get("quantity")
        if category is None or not isinstance(reason, str) or not reason:
            continue
        if not isinstance(quantity, int) or isinstance(quantity, bool) or quantity <= 0:
            continue
        reason = _printable(reason[:MAX_REASON])
        key = (project_id, category, DISCARD_OUTCOMES.get(reason, "dropped"), SDK_MARK + reason)
        if key not in counts and len(counts) >= MAX_DISCARD_ENTRIES:
            over = True
            continue
        taken = min(quantity, MAX_DISCARD_QUANTITY - counts[key], room)
        over = over or taken < quantity
        if taken > 0:
            counts[key] += taken
            room -= taken
    if over:
        counts[(project_id, "client_report", "accepted", "")] -= 1
        counts[(project_id, "client_report", "invalid", DISCARDS_OVER_BOUND)] += 1
    return counts


def _printable(reason: str) -> str:
    """A reason as it may be stored and shown: printable characters only (an SDK's reason is a short code)."""
    return reason if reason.isprintable() else "".join(c for c in reason if c.isprintable()) or "unknown"


def is_reported(reason: str) -> bool:
    """Whether an outcome's ``reason`` is a quantity an SDK reported (see :data:`SDK_MARK`)."""
    return reason[:1] == SDK_MARK


def accepted_counts(outcomes: Outcomes) -> Counter[tuple[int, str]]:
    """(project, category) → items accepted so far: what a request spends of the quotas."""
    counts: Counter[tuple[int, str]] = Counter()
    for (project_id, category, outcome, _), quantity in outcomes.items():
        if outcome == "accepted" and category != "client_report":
            counts[(project_id, category)] += quantity
    return counts


def as_refused(outcomes: Outcomes, outcome: str, reason: str) -> Outcomes:
    """``outcomes`` with every accepted item (client reports aside) turned into ``outcome`` for ``reason``:
    a request refused whole by a quota."""
    counts: Outcomes = Counter()
    for (project_id, category, was, why), quantity in outcomes.items():
        if was == "accepted" and category != "client_report":
            counts[(project_id, category, outcome, reason)] += quantity
        else:
            counts[(project_id, category, was, why)] += quantity
    return counts
