"""An issue with one event as markdown for an agent: the figures the issue page shows, then the exception
chain with the in-app frames first (the application's own code is what an agent can change), the request,
the tags; cut into pages of at most 8 KB (``page`` 1, 2, …). Every text that came from the event is fenced as
untrusted (:mod:`stacklens.agents.untrusted`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from stacklens.agents.untrusted import fence
from stacklens.ingest.in_app import InAppRules
from stacklens.issues import payload_view as ev
from stacklens.issues.events import EventRow
from stacklens.issues.payload_exceptions import FrameView, exceptions

PAGE_BYTES = 8 * 1024
MAX_FRAMES = 40


@dataclass(frozen=True)
class MarkdownPage:
    text: str
    page: int
    pages: int


def _when(value: datetime | None) -> str:
    return value.isoformat(timespec="seconds").replace("+00:00", "Z") if value else "—"


def _frame_line(frame: FrameView) -> str:
    where = frame["filename"] + (f":{frame['lineno']}" if frame["lineno"] is not None else "")
    line = f"- `{frame['function']}` at {fence(where)}" + ("" if frame["in_app"] else " (vendor)")
    if frame["context_line"]:
        line += f"\n  > {fence(frame['context_line'].strip())}"
    return line


def event_markdown(issue: dict[str, Any], project_slug: str, row: EventRow | None, rules: InAppRules) -> str:
    """The whole text (before paging)."""
    lines = [
        f"# Issue {issue['issue_id']} in project {project_slug}",
        "",
        f"- title: {fence(issue['title'])}",
        f"- culprit: {fence(issue['culprit'])}",
        f"- level: {issue['level']} · status: {issue['status']}",
        f"- events: {int(issue['events']):,} · users: {int(issue.get('users_affected', 0)):,} (all time)",
        f"- first seen: {_when(issue['first_seen'])} · last seen: {_when(issue['last_seen'])}",
        f"- releases: first {issue.get('first_release') or '—'}, last {issue.get('last_release') or '—'}",
    ]
    if row is None:
        lines += ["", "No stored event (all older than the retention)."]
        return "\n".join(lines)
    payload = ev.load_payload(row["payload"])
    lines += [
        "",
        f"## Latest event {row['event_id']}",
        "",
        f"- at {_when(row['timestamp'])} · environment {row['environment'] or '—'} · release "
        f"{row['release'] or '—'}",
        f"- message: {fence(ev.message_text(payload))}",
    ]
    for exc in exceptions(payload, rules):
        frames = exc["frames"][:MAX_FRAMES]
        own = [f for f in frames if f["in_app"]]
        vendor = [f for f in frames if not f["in_app"]]
        lines += ["", f"### {fence(exc['type'])}: {fence(exc['value'])}", ""]
        lines += ["In-app frames (where it occurred first):"] + [_frame_line(f) for f in own]
        if vendor:
            lines += ["", "Other frames:"] + [_frame_line(f) for f in vendor]
    request = ev.request_data(payload)
    if request:
        lines += ["", "## Request", "", f"- {request.get('method', '')} {fence(request.get('url', ''))}"]
    tags = ev.tags(payload, row)
    if tags:
        lines += ["", "## Tags", ""] + [f"- {key}: {fence(value)}" for key, value in tags]
    return "\n".join(lines)


def paginate(text: str, page: int, size: int = PAGE_BYTES) -> MarkdownPage:
    """Page ``page`` (from 1) of ``text`` cut at line ends into pieces of at most ``size`` UTF-8 bytes."""
    pieces: list[str] = []
    current: list[str] = []
    used = 0
    for line in text.split("\n"):
        encoded = len(line.encode("utf-8")) + 1
        while encoded > size:  # one line longer than a page: cut it by characters
            cut = line.encode("utf-8")[: size - 1].decode("utf-8", "ignore")
            if current:
                pieces.append("\n".join(current))
                current, used = [], 0
            pieces.append(cut)
            line = line[len(cut) :]
            encoded = len(line.encode("utf-8")) + 1
        if used + encoded > size and current:
            pieces.append("\n".join(current))
            current, used = [], 0
        current.append(line)
        used += encoded
    if current:
        pieces.append("\n".join(current))
    pages = max(1, len(pieces))
    index = min(max(page, 1), pages)
    return MarkdownPage(pieces[index - 1] if pieces else "", index, pages)
