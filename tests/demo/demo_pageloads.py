"""The demo's browser page loads of the last days, as the backfill draws them (its rate, its releases), stored
as ingest stores them and folded into the states budgets and performance rules read — what the pipelines do,
without running them."""

from __future__ import annotations

import json
import random
import time
import uuid
from datetime import UTC, datetime, timedelta

from clickhouse_connect.driver.client import Client

from demo import arrivals, browser_pageloads, traffic
from demo.delivery import PAGE_LOADS
from stacklens.ingest.fields import Origin
from stacklens.ingest.transactions import spans_rows, transaction_row
from tests.stacklens.performance.budget_seed import fold

HISTORY_DAYS = 35  # the demo's: releases spread over 35 days


def land(
    client: Client, org_id: int, project_id: int, days: int = 8, seed: int = 36, now: datetime | None = None
) -> int:
    """Page loads of the ``days`` days before ``now`` (default: now) at the demo's rate; how many."""
    rng = random.Random(seed)
    now = now or datetime.now(UTC)
    tx_rows, span_rows = [], []
    plan = [a for a in arrivals.arrivals(rng, now - timedelta(days=days), now) if a.kind == PAGE_LOADS]
    for arrival in plan:
        offset = (now.date() - arrival.at.date()).days
        release = traffic.release_at(offset, HISTORY_DAYS) if offset else traffic.CURRENT_RELEASE
        customer = rng.choice(traffic.CUSTOMERS) if rng.random() > 0.4 else None
        payload = browser_pageloads.pageload(
            rng,
            "https://shop.example",
            release,
            "production",
            arrival.at,
            customer.id if customer else None,
            fail_api=rng.random() < 0.05,
        )
        raw = json.dumps(payload)
        origin = Origin(org_id, project_id, None, uuid.uuid4().hex, time.time())
        row = transaction_row(payload, origin, raw.encode(), raw)
        tx_rows.append(row)
        span_rows.extend(spans_rows(payload, row, origin))
    for table, rows in (("transactions", tx_rows), ("spans", span_rows)):
        body = "\n".join(json.dumps(r, default=str) for r in rows).encode()
        client.raw_insert(table, insert_block=body, fmt="JSONEachRow")
    fold(client, days + 1)
    return len(plan)
