"""The project quota form's boxes (project settings): events per minute over every category and a limit per
category, each empty for "no limit of the project's own". Parsing names a bad box by its label, so the page
can show the message next to it and keep what was typed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from stacklens.control.project_quotas import (
    LIMITED_CATEGORIES,
    MAX_ATTACHMENT_BYTES,
    MAX_PER_MINUTE,
    quota_of,
)
from stacklens.metrics import units

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
    values[ATTACHMENT_BOX] = attachment_box(quota.attachment_bytes)
    return QuotaForm(values)


def parse_form(raw: Mapping[str, str]) -> tuple[dict[str, int | None], QuotaForm]:
    """Each box as a limit (None when empty) and the form as typed, with one message per box that is not a
    whole number from 1 to :data:`MAX_PER_MINUTE` (thousands separators allowed: people type "10,000"); the
    attachment box as bytes under :data:`ATTACHMENT_BOX` (:func:`parse_attachment`)."""
    form = QuotaForm({name: raw.get(name, "").strip() for name in (*LABELS, ATTACHMENT_BOX)})
    limits: dict[str, int | None] = {}
    limits[ATTACHMENT_BOX], bad = parse_attachment(form.values[ATTACHMENT_BOX])
    if bad:
        form.errors[ATTACHMENT_BOX] = bad
    for name in LABELS:
        typed = form.values[name]
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


# The project's attachment quota (docs/feedback.md) is typed in MiB beside the per-minute boxes: a byte count
# of nine digits is hard to read back, and the page writes sizes in binary units everywhere (KiB, MiB, GiB).
ATTACHMENT_BOX = "attachment_mib"
ATTACHMENT_LABEL = "Attachments kept (MiB)"
MIB = 1024 * 1024
_MAX_MIB = MAX_ATTACHMENT_BYTES // MIB


@dataclass(frozen=True)
class AttachmentFacts:
    """What the page says of the project's attachments: its own quota (None: the installation's), the
    quota that applies and the bytes kept now, each written in binary units."""

    own_bytes: int | None
    applied: str
    installation: str
    stored: str
    stored_share: str  # the stored bytes as a share of the applied quota ('' when the quota is 0)


def attachment_facts(own_bytes: int | None, installation_bytes: int, stored_bytes: int) -> AttachmentFacts:
    applied = installation_bytes if own_bytes is None else own_bytes
    share = f"{units.number(100 * stored_bytes / applied, 1)} %" if applied else ""
    return AttachmentFacts(
        own_bytes,
        units.binary_size(applied),
        units.binary_size(installation_bytes),
        units.binary_size(stored_bytes),
        share,
    )


def attachment_box(own_bytes: int | None) -> str:
    """The box's text for a stored quota: MiB without trailing zeros ('' for the installation's)."""
    return "" if own_bytes is None else units.plain_number(round(own_bytes / MIB, 6))


def parse_attachment(typed: str) -> tuple[int | None, str | None]:
    """The box as bytes (None: empty, the installation's quota) or the message naming it: a number of MiB
    from 0 (keep no attachments) to 1 PiB; "1,024" and "0.5" are read as people write them."""
    text = typed.strip().replace(",", "").replace("_", "").replace(" ", "")
    if text.lower().endswith("mib"):
        text = text[:-3]
    if not text:
        return None, None
    try:
        mib = float(text) if text.isascii() else -1.0
    except ValueError:
        mib = -1.0
    if not (0 <= mib <= _MAX_MIB):  # also refuses nan and inf
        return None, (
            f"{ATTACHMENT_LABEL} must be a number of MiB from 0 to {_MAX_MIB:,} (1 PiB), or empty for the "
            "installation's quota"
        )
    return round(mib * MIB), None
