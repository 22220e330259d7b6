"""The maintenance log: an action timed and recorded whatever its outcome, newest first."""

from __future__ import annotations

import pytest

from stacklens.control.db import session_scope
from stacklens.control.maintenance_log import Maintenance, list_runs, record_run


def test_actions_are_recorded_with_outcome_and_duration(control_settings) -> None:
    with Maintenance("backup") as done:
        done.summary = "backup to /b"
    failed = Maintenance("migrate")
    failed.summary = "migrate"
    with pytest.raises(RuntimeError), failed:
        raise RuntimeError("disk full\nmore")
    with session_scope(control_settings) as session:
        done.record(session)
        failed.record(session)
        with pytest.raises(ValueError, match="unknown maintenance kind"):
            record_run(session, "dance", done.started_at, 1, "succeeded", "")
    with session_scope(control_settings) as session:
        runs = list_runs(session)
        only = list_runs(session, kind="backup")
    assert [(r.kind, r.outcome) for r in runs] == [("migrate", "failed"), ("backup", "succeeded")]
    assert runs[0].summary == "migrate — failed: disk full" and runs[1].duration_ms is not None
    assert [r.kind for r in only] == ["backup"]
    assert runs[1].as_json()["finished_at"] >= runs[1].as_json()["started_at"]
