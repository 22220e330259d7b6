"""What the issue page shows of the trackers: the organization's connections and a prefilled ticket."""

from __future__ import annotations

from dashboards.issue_trackers import tracker_context
from stacklens.control.db import session_scope
from stacklens.settings import Settings

CHAIN = [
    {
        "type": "KeyError",
        "value": "'sku'",
        "frames": [{"function": "add", "filename": "shop/cart.py", "lineno": 12}],
    }
]


def test_the_draft_and_no_connections_yet(stores: Settings, org_factory) -> None:
    org = org_factory()
    summary = {"title": "KeyError: 'sku'", "level": "error", "events": 3}
    with session_scope(stores) as session:
        context = tracker_context(session, org["org_id"], org["project_id"], 7, summary, {"chain": CHAIN})
    assert context["connections"] == [] and context["links"] == [] and context["tracker_targets"] == []
    assert context["draft_title"] == "KeyError: 'sku'"
    preview = context["draft_preview"]
    assert "KeyError: 'sku'" in preview and "at add (shop/cart.py:12)" in preview
    assert "StackLens reference" not in preview  # added when the ticket is sent
