"""The project quota form's boxes (project settings): events per minute over every category and a limit per
category, each empty for "no limit of the project's own". Parsing names a bad box by its label, so the page
can show the message next to it and keep what was typed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from stacklens.control.project_quotas import LIMITED_CATEGORIES, MAX_PER_MINUTE, quota_of

TOTAL = "events_per_minute"
# The boxes in page order: the total first, then one per category, named as the page labels them.
LABELS: dict[str, str] = {
    TOTAL: "Events per minute",
    "error": "Errors per minute",
    "transaction": "Transactions per minute",
    "session": "Sessions per minute",
    "log": "Logs per minute",
    "span": "Spans per minute",
    "replay": "Replays per minute",
}
assert set(LABELS) - {TOTAL} == set(LIMITED_CATEGORIES), "every limited category has a box"


@dataclass
class QuotaForm:
    """What the boxes show: the text per box and, after a refused save, a message per bad box."""

    values: dict[str, str]
    errors: dict[str, str] = field(default_factory=dict)


def current_form(events_per_minute: int | None, categories: object) -> QuotaForm:
    """The boxes filled from a project's two stored quota columns."""
    quota = quota_of(0, events_per_minute, categories)
    values = {TOTAL: "" if quota.events_per_minute is None else str(quota.events_per_minute)}
    values.update({c: str(quota.categories[c]) if c in quota.categories else "" for c in LIMITED_CATEGORIES})
    return QuotaForm(values)


def parse_form(raw: Mapping[str, str]) -> tuple[dict[str, int | None], QuotaForm]:
    """Each box as a limit (None when empty) and the form as typed, with one message per box that is not a
    whole number from 1 to :data:`MAX_PER_MINUTE` (thousands separators allowed: people type "10,000")."""
    form = QuotaForm({name: raw.get(name, "").strip() for name in LABELS})
    limits: dict[str, int | None] = {}
    for name, typed in form.values.items():
        text = typed.replace(",", "").replace("_", "").replace(" ", "")
        if not text:
            limits[name] = None
        elif text.isascii() and text.isdigit() and 1 <= int(text) <= MAX_PER_MINUTE:
            limits[name] = int(text)
        else:
            form.errors[name] = (
                f"{LABELS[name]} must be a whole number from 1 to {MAX_PER_MINUTE:,}, or empty for no limit"
            )
    return limits, form
