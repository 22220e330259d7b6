"""Whether the marts a page reads still lack history the raw layer holds: the "building" notice.

After a first start the demo (or an application's backlog) delivers weeks of history within minutes, and the
pipelines fold it into the marts run by run; until they have, a page that reads a mart drew a chart with a gap
of days. The pages say instead what is happening: "building the last 35 days: 40 %" — of the hours with data
since the oldest hour still waiting, the share already in the marts. Live data waits a minute or two for its
run at any time, so only history waits for the notice: an hour older than :data:`LIVE_LAG` that the marts have
not taken yet.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from clickhouse_connect.driver.client import Client

from stacklens.warehouse.queries import run_query

# The schedules take live data within five minutes (the performance job's cron), a late event within the
# hour's next run; anything older still waiting is history the marts are building.
LIVE_LAG = timedelta(hours=2)
# The oldest day any mart keeps (the raw layer's retention and the partitions): no page reads further back.
LOOKBACK = timedelta(days=90)

# The marts of each family of pages: the raw table it reads (raw_arrival_hours' source) and the asset whose
# watermark says how far the run has read it. Constants, never input.
Family = Literal["performance", "releases"]
SOURCES: dict[str, tuple[str, str]] = {
    "performance": ("transactions", "pageload_facts"),
    "releases": ("sessions", "session_periods"),
}


@dataclass(frozen=True)
class Building:
    days: int  # UTC calendar days from the oldest hour still waiting to today (at least 1)
    percent: int  # of the hours with data in those days, the share already in the marts (rounded down)

    def label(self) -> str:
        span = "day" if self.days == 1 else f"{self.days} days"
        return f"building the last {span}: {self.percent} %"


def building(client: Client, project_id: int, family: Family, now: datetime | None = None) -> Building | None:
    """The notice for ``project_id``'s pages of ``family``, or ``None`` when their marts hold all history."""
    source, asset = SOURCES[family]
    now = (now or datetime.now(UTC)).astimezone(UTC)
    rows = run_query(
        client,
        "marts/building_hours",
        {"source": source, "asset": asset, "project_id": project_id, "since": now - LOOKBACK},
    )
    if not rows or not rows[0]["pending_hours"]:
        return None
    oldest = rows[0]["oldest_pending"]
    oldest = oldest.replace(tzinfo=UTC) if oldest.tzinfo is None else oldest
    if now - oldest < LIVE_LAG:
        return None
    pending = int(rows[0]["pending_hours"])
    # The share is over the hours since the oldest waiting one: hours built before it are not this build's.
    since_oldest = run_query(
        client,
        "marts/building_hours",
        {"source": source, "asset": asset, "project_id": project_id, "since": oldest},
    )[0]
    built = int(since_oldest["built_hours"])
    days = max(1, (now.date() - oldest.date()).days)  # UTC days back to the oldest waiting hour's day
    return Building(days, math.floor(100 * built / (built + pending)))
