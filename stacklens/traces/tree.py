"""The spans of one trace as one tree: parents before children (children by start time), each with its depth,
the spans whose parent never arrived marked as orphans (their subtrees follow the rooted tree), and the
critical path — the chain of spans that, walking back from the root's end, each finished last before the
next one began (what made the trace as long as it is)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from operator import attrgetter
from typing import NamedTuple

# Span statuses that mean success (Sentry's `ok`, OpenTelemetry's unset mapped to '').
OK_STATUSES = frozenset({"", "ok", "unset", "unknown"})
_START_ORDER = attrgetter("start_epoch_ms", "span_id")
# A child ending this close after the span that would follow it still counts as before it (clocks of two
# machines, rounded to the millisecond).
_SLACK_MS = 1.0


class SpanRow(NamedTuple):
    """One span as read: a transaction's root span (``is_transaction``) or a span stored under one. A tuple
    in the column order of warehouse_sql/queries/traces/spans.sql, so a trace of thousands of spans is read
    without building an object field by field (bench/traces.py)."""

    span_id: str
    parent_span_id: str
    project_id: int
    transaction_event_id: str
    is_transaction: bool
    start_epoch_ms: int  # the start, ms since 1970 (UTC)
    duration_ms: float
    op: str
    description: str
    status: str
    status_code: int
    service: str
    release: str
    environment: str
    platform: str = ""  # the transaction's platform (`javascript` for a browser SDK), '' on its spans


@dataclass(slots=True)
class TraceSpan:
    """One span placed in the tree; ``start_ms`` is its offset from the trace's first span."""

    row: SpanRow
    service: str
    start_ms: float
    depth: int = 0
    orphan: bool = False  # its parent span id was never received (it heads a subtree of its own)
    critical: bool = False
    children: list[str] = field(default_factory=list)

    @property
    def span_id(self) -> str:
        return self.row.span_id

    @property
    def end_ms(self) -> float:
        return self.start_ms + self.row.duration_ms

    @property
    def failed(self) -> bool:
        """A status other than ok, or an HTTP status of 500 or more."""
        return self.row.status not in OK_STATUSES or self.row.status_code >= 500


@dataclass(frozen=True)
class SpanTree:
    """Spans in tree order (rooted trees first, then orphan subtrees, each by start time)."""

    spans: list[TraceSpan]
    roots: list[str]
    orphans: list[str]
    start: datetime
    duration_ms: float


def build_tree(rows: Iterable[SpanRow], service_of: dict[int, str]) -> SpanTree | None:
    """The tree of ``rows`` (the first row of each span id wins); ``service_of`` names a span whose source
    gave no service by its project — ``<project> (browser)`` for the spans of a browser SDK's transaction, so
    a page and its own server in one project are told apart. ``None`` when there are no rows."""
    unique: dict[str, SpanRow] = {}
    for row in rows:
        if row.span_id and row.span_id not in unique:
            unique[row.span_id] = row
    if not unique:
        return None
    # Placed by start time once, so each parent's children arrive in their order (no sort per parent).
    by_start = sorted(unique.values(), key=_START_ORDER)
    first = by_start[0].start_epoch_ms
    browser = {r.transaction_event_id for r in by_start if r.is_transaction and r.platform == "javascript"}
    names: dict[tuple[int, str], str] = {}

    def name(r: SpanRow) -> str:
        if r.service:
            return r.service
        key = (r.project_id, r.transaction_event_id)
        found = names.get(key)
        if found is None:
            project = service_of.get(r.project_id) or f"project {r.project_id}"
            found = names[key] = f"{project} (browser)" if r.transaction_event_id in browser else project
        return found

    nodes = {r.span_id: TraceSpan(r, name(r), float(r.start_epoch_ms - first)) for r in by_start}
    heads: list[TraceSpan] = []
    for node in nodes.values():
        parent = node.row.parent_span_id
        if parent and parent in nodes and parent != node.span_id:
            nodes[parent].children.append(node.span_id)
        else:
            node.orphan = bool(parent)
            heads.append(node)
    heads.sort(key=lambda n: (n.orphan, n.start_ms, n.span_id))
    ordered: list[TraceSpan] = []
    seen: set[str] = set()

    def walk(head: TraceSpan) -> None:
        stack = [(head, 0)]
        while stack:
            node, depth = stack.pop()
            if node.span_id in seen:
                continue
            seen.add(node.span_id)
            node.depth = depth
            ordered.append(node)
            stack.extend((nodes[c], depth + 1) for c in reversed(node.children))

    for head in heads:
        walk(head)
    # Spans whose parents loop back to them reach no head: the earliest of each loop heads it as an orphan.
    for node in nodes.values():  # in start order
        if node.span_id not in seen:
            node.orphan = True
            nodes[node.row.parent_span_id].children.remove(node.span_id)  # the loop is cut above it
            heads.append(node)
            walk(node)
    roots = [h.span_id for h in heads if not h.orphan]
    main = next((h for h in heads if not h.orphan), heads[0])
    _mark_critical(main, nodes)
    end = max(n.end_ms for n in nodes.values())
    return SpanTree(
        spans=ordered,
        roots=roots,
        orphans=[h.span_id for h in heads if h.orphan],
        start=datetime.fromtimestamp(first / 1000.0, UTC),
        duration_ms=end,
    )


def _mark_critical(root: TraceSpan, nodes: dict[str, TraceSpan]) -> None:
    """Walk back from the root's end: the child that finished last is on the path, then the child that
    finished last before that one started, and so on; each chosen child is walked the same way."""
    stack = [(root, root.end_ms)]
    while stack:
        span, limit = stack.pop()
        if span.critical:
            continue
        span.critical = True
        cursor = min(span.end_ms, limit)
        first = True
        for child in sorted((nodes[c] for c in span.children), key=lambda n: n.end_ms, reverse=True):
            if child.start_ms >= cursor or (not first and child.end_ms > cursor + _SLACK_MS):
                continue
            stack.append((child, cursor))
            cursor = child.start_ms
            first = False
            if cursor <= span.start_ms:
                break
