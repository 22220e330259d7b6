"""Backfills as data engineers know them (issue #47, point 7): `stacklens pipelines backfill --from --to`
rebuilds the daily-partitioned marts over the range through the real definitions (one run per partitioned
job, recorded in the Dagster instance with the range), leaves the schedules' watermarks alone, and refuses
a bad range with the option named."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import dagster as dg
import pytest

from pipelines import warehouse_ops as ops
from pipelines.backfill_range import BackfillError, parse_range
from pipelines.planning import RANGE_END_TAG, RANGE_START_TAG
from stacklens.cli.main import main
from tests.pipelines.assets.test_budgets import load
from tests.pipelines.pipeline_seed import TX_COLS


def test_a_backfill_rebuilds_the_days_of_its_range(client, instance, settings, make_org, capsys) -> None:
    org = make_org("Backfilled")
    today = datetime.now(UTC).date()
    first, last = today - timedelta(days=5), today - timedelta(days=4)
    at = datetime.combine(first, datetime.min.time(), UTC) + timedelta(hours=10)
    rows = [load(org["project_id"], org["org_id"], "/", 1000 + i, at + timedelta(hours=i)) for i in range(6)]
    outside = datetime.combine(today - timedelta(days=2), datetime.min.time(), UTC) + timedelta(hours=9)
    rows.append(load(org["project_id"], org["org_id"], "/", 900, outside))
    client.insert("transactions", rows, column_names=TX_COLS)

    assert (
        main(["pipelines", "backfill", "--from", first.isoformat(), "--to", last.isoformat(), "--json"]) == 0
    )
    answer = json.loads(capsys.readouterr().out)
    assert answer["via"] == "direct"
    jobs = {o["job"]: o for o in answer["outcomes"]}
    assert set(jobs) == {"performance_job", "sessions_job"}
    assert all(o["success"] for o in answer["outcomes"]), answer
    days = dict(
        client.query(
            "SELECT toString(toDate(start)), sum(views) FROM pageload_periods FINAL"
            " WHERE project_id = {p:UInt64} AND grain = 'day' GROUP BY 1",
            parameters={"p": org["project_id"]},
        ).result_rows
    )
    assert days == {first.isoformat(): 6}, days  # the range's day, not the day outside it
    # The schedules read on from where they were: a backfill moves no watermark.
    assert ops.get_watermarks(client, ["pageload_facts"])["pageload_facts"] == ops.EPOCH
    run = instance.get_run_by_id(jobs["performance_job"]["run_id"])
    assert run.tags[RANGE_START_TAG] == first.isoformat() and run.tags[RANGE_END_TAG] == last.isoformat()
    assert run.status == dg.DagsterRunStatus.SUCCESS

    assert main(["pipelines", "backfill", "--from", first.isoformat(), "--to", first.isoformat()]) == 0
    printed = capsys.readouterr().out
    assert f"backfill {first} … {first} (1 day):" in printed and "performance_job: run" in printed


@pytest.mark.parametrize(
    ("first", "last", "message"),
    [
        ("2026-13-01", "2026-11-20", "--from: '2026-13-01' is not a date"),
        ("2026-11-20", "2026-11-19", "--to: 2026-11-19 is before --from 2026-11-20"),
        ("2020-01-01", "2020-01-02", "--from: 2020-01-01 is older than the oldest partition"),
        ("2026-11-20", "2999-01-01", "--to: 2999-01-01 is after today"),
    ],
)
def test_a_bad_range_is_refused_naming_the_option(settings, capsys, first, last, message) -> None:
    with pytest.raises(BackfillError, match="^" + message.replace("(", r"\(")):
        parse_range(first, last, today=datetime(2026, 11, 25, tzinfo=UTC).date())
    if "2999" not in last and "2020" not in first:
        assert main(["pipelines", "backfill", "--from", first, "--to", last]) == 2
        assert message in capsys.readouterr().err
