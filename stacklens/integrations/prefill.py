"""The title and description a new ticket starts with: the error, the culprit, counts, first/last seen, the
top of the stack and a link back to the issue. The page shows them for editing before anything is sent."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from clickhouse_connect.driver.client import Client

from stacklens.integrations.document import Document
from stacklens.issues import payload_exceptions
from stacklens.issues import payload_view as ev
from stacklens.issues.events import IssueEvents

STACK_TOP_FRAMES = 8  # where it happened and its callers; the issue page holds the rest
TITLE_CHARS = 240  # GitHub allows 256, Jira 255: room for nothing to be cut mid-word by the tracker


@dataclass(frozen=True)
class Draft:
    title: str
    notes: str  # the user's own words, first in the description (editable on the page)
    summary: Mapping[str, Any]
    stack_top: str
    link: str


def _when(value: object) -> str:
    return value.strftime("%Y-%m-%d %H:%M UTC") if isinstance(value, datetime) else str(value or "")


def stack_top(chain: list[payload_exceptions.ExceptionView], frames: int = STACK_TOP_FRAMES) -> str:
    """The raised exception and its top frames, as text."""
    if not chain:
        return ""
    first = chain[0]
    lines = [f"{first['type']}: {first['value']}".rstrip(": ")]
    for frame in first["frames"][:frames]:
        where = f"{frame['filename']}:{frame['lineno']}" if frame["lineno"] is not None else frame["filename"]
        lines.append(f"  at {frame['function']} ({where})")
    if len(first["frames"]) > frames:
        lines.append(f"  … {len(first['frames']) - frames} more frames")
    return "\n".join(lines)


def draft_for(
    client: Client, org_id: int, project_id: int, issue_id: int, summary: Mapping[str, Any], link: str
) -> Draft:
    """The prefilled ticket of an issue (its newest stored event gives the stack)."""
    events = IssueEvents(client, org_id, project_id, issue_id, summary.get("fingerprint") or "")
    latest = events.latest()
    row = events.get(latest) if latest else None
    chain = payload_exceptions.exceptions(ev.load_payload(row.get("payload", ""))) if row else []
    title = str(summary.get("title") or "(no title)")[:TITLE_CHARS]
    return Draft(title=title, notes="", summary=summary, stack_top=stack_top(chain), link=link)


def document(draft: Draft, marker: str) -> Document:
    """The description: notes, facts, stack top, link back, and the marker that makes creation idempotent."""
    s = draft.summary
    doc = Document()
    if draft.notes.strip():
        doc.paragraph(draft.notes.strip())
    doc.heading("Error")
    doc.facts(
        [
            ("Error", str(s.get("title") or "")),
            ("Culprit", str(s.get("culprit") or "")),
            ("Level", str(s.get("level") or "")),
            ("Events", str(s.get("events", ""))),
            ("Users affected", str(s.get("users_affected", ""))),
            ("First seen", _when(s.get("first_seen"))),
            ("Last seen", _when(s.get("last_seen"))),
        ]
    )
    if draft.stack_top:
        doc.heading("Stack (top)")
        doc.code(draft.stack_top)
    if draft.link:
        doc.link("Open the issue in StackLens", draft.link)
    doc.paragraph(f"StackLens reference: {marker}")
    return doc
