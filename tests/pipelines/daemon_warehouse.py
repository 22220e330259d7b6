"""Run as a child process by test_daemon_postgres.py: seed the raw layer or count a mart, taking its turn on
the embedded warehouse that the Dagster processes share (the test process keeps its own engine elsewhere).

``python -m tests.pipelines.daemon_warehouse seed <first> <count>`` inserts ``count`` events of distinct
issues; ``… issues`` prints how many issues the ``issues`` mart holds.
"""

from __future__ import annotations

import os
import sys
import uuid
from datetime import UTC, datetime

from stacklens.warehouse.client import release_client, warehouse_client_in_turn

PROJECT, ORG = 7, 1


def main(argv: list[str]) -> None:
    url, database = os.environ["STACKLENS_WAREHOUSE_URL"], os.environ["STACKLENS_WAREHOUSE_DATABASE"]
    client = warehouse_client_in_turn(url, database, 300)
    try:
        if argv[0] == "seed":
            first, count = int(argv[1]), int(argv[2])
            now = datetime.now(UTC)
            rows = [
                [ORG, PROJECT, uuid.uuid4(), 1000 + n, f"fp{n}", now, now, f"Error {n}", "error", f"user{n}"]
                for n in range(first, first + count)
            ]
            columns = ["org_id", "project_id", "event_id", "issue_id", "fingerprint", "timestamp"]
            client.insert(
                "events", rows, column_names=[*columns, "received_at", "title", "level", "user_key"]
            )
        else:
            print(client.query("SELECT uniqExact(issue_id) FROM issues FINAL").result_rows[0][0])
    finally:
        release_client(url, database)


if __name__ == "__main__":
    main(sys.argv[1:])
