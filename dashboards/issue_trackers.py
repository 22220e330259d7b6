"""What the issue page shows of the tracker integrations: the issue's links and the Create / Link forms
(connections, their targets, the prefilled title and description)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy.orm import Session

from stacklens.control.integrations import LABELS, list_connections
from stacklens.integrations.document import to_plain
from stacklens.integrations.links import links_of_issues
from stacklens.integrations.prefill import Draft, document, stack_top


def tracker_context(
    db: Session,
    org_id: int,
    project_id: int,
    issue_id: int,
    summary: Mapping[str, Any],
    parts: dict[str, Any] | None,
) -> dict[str, Any]:
    connections = list_connections(db, org_id)
    draft = Draft(
        title=str(summary.get("title") or "(no title)")[:240],
        notes="",
        summary=summary,
        stack_top=stack_top(parts["chain"]) if parts else "",
        link="",
    )
    return {
        "links": links_of_issues(db, org_id, project_id, [issue_id]).get(issue_id, []),
        "connections": [
            {
                "id": c.id,
                "name": c.name,
                "type": c.type,
                "label": LABELS[c.type],
                "default_target": c.default_target,
            }
            for c in connections
        ],
        "tracker_targets": sorted({t for c in connections for t in (c.targets or [])}),
        "draft_title": draft.title,
        # What the description will say besides the notes (the link back and the reference are added on send).
        "draft_preview": to_plain(document(draft, "…")).rsplit("\n\nStackLens reference", 1)[0],
        "link_error": None,
        "link_values": {},
    }
