"""Standalone INP spans for seeded page loads: what makes the facts' INP differ from a page load's own."""

from __future__ import annotations

import random
import uuid
from datetime import timedelta
from typing import Any


def interaction_spans(client: Any, loads: list[dict[str, Any]], rng: random.Random) -> int:
    """A standalone interaction span (a `ui.interaction.click` transactions row with its INP, as
    stacklens/ingest/inp.py stores @sentry/browser 8+'s) for every other page load that carries no INP of its
    own, on its trace a few seconds after it: the facts take it as the page load's INP, Explore does not."""
    rows = [
        [
            load["org_id"],
            load["project_id"],
            uuid.UUID(int=rng.getrandbits(128)),
            load["trace_id"],
            load["timestamp"] + timedelta(seconds=5),
            load["received_at"],
            "ui.interaction.click",
            {"inp": rng.uniform(40, 900)},
            load["page"],
        ]
        for i, load in enumerate(r for r in loads if r["op"] == "pageload" and "inp" not in r["measurements"])
        if i % 2
    ]
    client.insert(
        "transactions",
        rows,
        column_names=[
            "org_id",
            "project_id",
            "event_id",
            "trace_id",
            "timestamp",
            "received_at",
            "op",
            "measurements",
            "page",
        ],
    )
    return len(rows)
