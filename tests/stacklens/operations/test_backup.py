"""`stacklens backup` / `restore` of an embedded installation, in this process: what goes in, what comes back
(the API's answers and the warehouse's checksums), sealing, incremental backups, and the cut-off while ingest
keeps answering."""

from __future__ import annotations

import json
import threading

import pytest

from stacklens.control.db import session_scope
from stacklens.control.maintenance_log import list_runs
from stacklens.operations.backup import BackupError, run_backup
from stacklens.operations.restore import restore_backup
from stacklens.settings import override_settings
from tests.stacklens.operations.installation import (
    answers,
    event_payload,
    fill,
    fresh_settings,
    ingest,
    pages,
    restored_answers,
)


def test_a_restore_gives_back_the_same_answers_and_rows(client, org_factory, stores, tmp_path) -> None:
    filled = fill(client, org_factory("Acme"))
    before = answers(client, filled)
    assert len(before["issues"]) == 3 and sum(len(e["events"]) for e in before["events"].values()) == 9

    manifest, logged = run_backup(stores, tmp_path / "b1")
    assert manifest.kind == "full" and not manifest.sealed and manifest.tables["events"]["rows"] == 9
    assert logged["outcome"] == "succeeded" and logged["detail"]["rows"] >= 9 and logged["duration_ms"] >= 0
    on_disk = json.loads((tmp_path / "b1" / "manifest.json").read_text())
    assert on_disk["cutoff"] and on_disk["secret"] == "not-included"
    assert not (tmp_path / "b1" / "secret_key").exists() and (tmp_path / "b1" / "control.db").exists()

    target = fresh_settings(tmp_path, stores)
    result = restore_backup(target, tmp_path / "b1")
    assert result.rows_checked >= 9 and result.warnings == []  # the same secret is at hand
    ids = [issue["id"] for issue in before["issues"]]
    before["pages"] = pages(client, filled, ids)
    after = restored_answers(target, filled, ids)
    assert after == before  # the API's answers and the pages, as they were

    # A data directory that holds an installation is never restored into.
    with pytest.raises(BackupError, match="not empty"):
        restore_backup(target, tmp_path / "b1")
    with pytest.raises(BackupError, match="not empty"):
        run_backup(stores, tmp_path / "b1")
    override_settings(stores)
    with session_scope(stores) as session:
        runs = list_runs(session)
    assert [r.kind for r in runs] == ["backup", "backup"]
    assert [r.outcome for r in runs] == ["failed", "succeeded"] and "not empty" in runs[0].summary


def test_events_answered_during_a_backup_are_in_it_or_after_its_cutoff(
    client, org_factory, stores, tmp_path
) -> None:
    """Ingest keeps answering while the drains are held; the backup holds exactly the rows landed before its
    cut-off, each event whole, and everything answered lands afterwards."""
    from stacklens.ingest.front_door import drains_held, front_door
    from stacklens.warehouse.client import get_warehouse

    def stored() -> int:
        return int(get_warehouse(stores).query("SELECT count() FROM events").result_rows[0][0])

    org = org_factory("Acme")
    ingest(client, org, [event_payload(n) for n in range(4)])
    # While a backup holds the drains, a request is still answered 200 (its rows durable in the spool) and
    # lands when the hold ends.
    with drains_held(stores):
        ingest(client, org, [event_payload(9)])
        assert stored() == 4
    assert front_door(stores).settle(30) and stored() == 5
    answered: list[int] = []
    stop = threading.Event()

    def keep_sending() -> None:
        n = 0
        while not stop.is_set():
            ingest(client, org, [event_payload(n)])
            answered.append(n)
            n += 1

    sender = threading.Thread(target=keep_sending)
    sender.start()
    try:
        while len(answered) < 3:
            threading.Event().wait(0.02)
        manifest, _ = run_backup(stores, tmp_path / "online")
    finally:
        stop.set()
        sender.join(30)
    assert front_door(stores).settle(30)
    kept = manifest.tables["events"]["rows"]
    assert 5 + 3 <= kept <= 5 + len(answered)
    target = fresh_settings(tmp_path, stores)
    restore_backup(target, tmp_path / "online")  # checks every kept table against the manifest
    override_settings(stores)
    assert stored() == 5 + len(answered) >= kept
