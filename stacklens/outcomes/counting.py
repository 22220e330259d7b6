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

CATEGORIES = ("error", "transaction", "span", "session", "log", "replay", "attachment", "client_report")
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
}

# Reasons the service gives.
UNREADABLE = "unreadable"  # not a JSON log line, or a payload of the wrong shape
UNKNOWN_APP_KEY = "unknown_app_key"
LINE_TOO_LARGE = "line_too_large"
REPLAY_DISABLED = "replay_disabled"  # the project's setting turned replay ingest off
NOT_STORED = "not_stored"  # attachments and spans without INP: counted, not kept
ORG_QUOTA = "org_quota"
PROJECT_QUOTA = "project_quota"
CATEGORY_QUOTA = "category_quota"
SPIKE_PROTECTION = "spike_protection"

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


def category_of(item_type: str) -> str | None:
    """The category a line of ``item_type`` counts under, or None for a type outcomes do not count."""
    return LINE_CATEGORIES.get(item_type)


def client_discards(project_id: int, payload: Mapping[str, Any]) -> Outcomes:
    """What an SDK's ``client_report`` says it dropped itself: its ``discarded_events`` by category and
    reason. Entries that are not well formed, or of a category outside ours, are left out."""
    counts: Outcomes = Counter()
    entries = payload.get("discarded_events")
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
        reason = reason[:MAX_REASON]
        counts[(project_id, category, DISCARD_OUTCOMES.get(reason, "dropped"), reason)] += quantity
    return counts


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
