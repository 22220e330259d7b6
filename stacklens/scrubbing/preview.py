"""A preview of scrubbing rules on a stored event: the event as stored, as the rules would leave it, and the
fields that would change (docs/scrubbing.md). The stored event has been through the built-in scrubbing and the
rules of its time already; nothing is written."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from clickhouse_connect.driver.client import Client

from stacklens.issues.events import IssueEvents, find_event
from stacklens.issues.payload_view import load_payload
from stacklens.scrubbing.apply import ScrubRules

MAX_CHANGES = 200


@dataclass(frozen=True)
class Change:
    """One field the rules change: its path (``extra.customer``, ``request.headers.Authorization``), its value
    as stored and after the rules (``None`` after: removed)."""

    path: str
    before: Any
    after: Any


@dataclass(frozen=True)
class Preview:
    event_id: str
    before: dict[str, Any]
    after: dict[str, Any]
    changes: list[Change]


def preview_event(
    client: Client, org_id: int, project_id: int, event_id: str, rules: ScrubRules
) -> Preview | None:
    """The preview of ``rules`` on an event of the project, or ``None`` when it has no such event."""
    found = find_event(client, org_id, [project_id], event_id)
    if found is None:
        return None
    row = IssueEvents(client, org_id, found.project_id, found.issue_id, found.fingerprint).get(found.event_id)
    if row is None:
        return None
    before = load_payload(row["payload"])
    after = rules.apply(before)
    return Preview(found.event_id, before, after, changes_between(before, after))


def changes_between(before: Any, after: Any, path: str = "") -> list[Change]:
    """The leaves that differ between a payload and its scrubbed copy (a removed field: ``after`` None)."""
    out: list[Change] = []
    _diff(before, after, path, out)
    return out


def _diff(before: Any, after: Any, path: str, out: list[Change]) -> None:
    if len(out) >= MAX_CHANGES or before is after:
        return
    if isinstance(before, dict) and isinstance(after, dict):
        for key, value in before.items():
            _diff(value, after.get(key, None) if key in after else None, _join(path, str(key)), out)
        return
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        for index, (old, new) in enumerate(zip(before, after, strict=True)):
            if isinstance(old, list) and len(old) == 2 and isinstance(old[0], str) and isinstance(new, list):
                _diff(
                    old[1], new[1] if len(new) == 2 else None, _join(path, old[0]), out
                )  # a [name, value] pair
            else:
                _diff(old, new, _join(path, str(index)), out)
        return
    if before != after:
        out.append(Change(path, before, after))


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key
