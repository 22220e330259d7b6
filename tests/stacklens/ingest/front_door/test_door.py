"""The front door: concurrent requests landed together, answers after the spool, duplicates across requests,
the spool completed after a crash, read-your-writes, and the queue on /api/health."""

from __future__ import annotations

import gzip
import json
import os
import threading
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from clickhouse_connect.driver.client import Client

from stacklens.ingest.flush_journal import FlushJournal, sync_filesystem
from stacklens.ingest.front_door import FrontDoor, doors, front_door, settle_front_doors
from stacklens.ingest.front_door import door as door_module
from stacklens.ingest.front_door import drain as drain_module
from stacklens.settings import Settings
from tests.api.live import serve
from tests.stacklens.ingest.front_door_seed import (
    count,
    error_line,
    land,
)


def test_an_answered_event_is_stored_once_and_a_resend_is_a_duplicate(
    settings: Settings, warehouse: Client
) -> None:
    line = error_line()
    first = land(settings, line)
    again = land(settings, line)
    assert (first.accepted, first.duplicates) == (1, 0)
    assert (again.accepted, again.duplicates) == (
        0,
        1,
    )  # found among rows spooled, not yet drained, or stored
    assert settle_front_doors()
    assert count(warehouse, "events") == 1
    assert (land(settings, line).accepted, land(settings, line).duplicates) == (
        0,
        1,
    )  # found in the warehouse


def test_fifty_concurrent_envelopes_land_in_a_handful_of_inserts(
    settings: Settings, warehouse: Client, make_org: Any
) -> None:
    """The coalescing itself, read from the engine: with merges stopped, each insert leaves a part of its
    own."""
    org = make_org("Coalesce")
    warehouse.command("SYSTEM STOP MERGES events")
    try:
        with serve(settings) as base:
            url = f"{base}/api/{org['project_id']}/envelope/"
            headers = {
                "Content-Encoding": "gzip",
                "X-Sentry-Auth": f"Sentry sentry_version=7, sentry_key={org['app_key']}",
            }
            barrier = threading.Barrier(50)
            answers: list[int] = []

            def send(n: int) -> None:
                event_id = uuid.uuid4().hex
                payload = {"event_id": event_id, "message": f"coalesced {n}", "level": "error"}
                body = b"\n".join(
                    [
                        json.dumps({"event_id": event_id}).encode(),
                        b'{"type":"event"}',
                        json.dumps(payload).encode(),
                    ]
                )
                barrier.wait()
                answers.append(
                    httpx.post(url, content=gzip.compress(body), headers=headers, timeout=60).status_code
                )

            threads = [threading.Thread(target=send, args=(n,)) for n in range(50)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert answers == [200] * 50
            # Read your writes: the issue list answered after the 200s counts all fifty (it waits for their
            # drain: up to a minute, as the posts; httpx's 5 s default timed out on a slow, loaded host).
            issues = httpx.get(
                f"{base}/api/projects/{org['project']}/issues",
                params={"range": "1h", "limit": 100},
                headers={"Authorization": f"Bearer {org['api_key']}"},
                timeout=60,
            ).json()["issues"]
            assert sum(issue["events"] for issue in issues) == 50
            health = httpx.get(
                f"{base}/api/health", headers={"Authorization": f"Bearer {org['api_key']}"}, timeout=60
            ).json()
            queue = health["front_door"]
            assert queue["rows_waiting"] == 0 and queue["drain_error"] == ""
            assert queue["flushes_per_second"] > 0 and queue["rows_per_flush"] >= 1
        parts = warehouse.query(
            "SELECT count() FROM system.parts WHERE database = currentDatabase() AND table = 'events'"
        ).result_rows[0][0]
        stored = warehouse.query(
            "SELECT count() FROM events WHERE org_id = {org:UInt64}", parameters={"org": org["org_id"]}
        ).result_rows[0][0]
    finally:
        warehouse.command("SYSTEM START MERGES events")
    assert stored == 50
    assert parts <= 10, f"50 one-event requests made {parts} inserts into events"


def test_a_sender_posting_in_sequence_is_answered_from_the_spool_after_its_first_request(
    settings: Settings, warehouse: Client, make_org: Any
) -> None:
    """An SDK sends from one transport thread, one envelope after another: only the first request at a
    quiet door waits for its landing; the next are answered once spooled, and land together."""
    org = make_org("Sequence")
    warehouse.command("SYSTEM STOP MERGES events")
    try:
        with serve(settings) as base, httpx.Client(timeout=60) as http:
            url = f"{base}/api/{org['project_id']}/envelope/"
            headers = {"X-Sentry-Auth": f"Sentry sentry_version=7, sentry_key={org['app_key']}"}
            spent: list[float] = []
            for n in range(40):
                event_id = uuid.uuid4().hex
                body = b"\n".join(
                    [
                        json.dumps({"event_id": event_id}).encode(),
                        b'{"type":"event"}',
                        json.dumps(
                            {"event_id": event_id, "message": f"in turn {n}", "level": "error"}
                        ).encode(),
                    ]
                )
                started = time.perf_counter()
                assert http.post(url, content=body, headers=headers).status_code == 200
                spent.append(time.perf_counter() - started)
            issues = http.get(
                f"{base}/api/projects/{org['project']}/issues",
                params={"range": "1h", "limit": 100},
                headers={"Authorization": f"Bearer {org['api_key']}"},
            ).json()["issues"]
            assert sum(issue["events"] for issue in issues) == 40  # read your writes
        parts = warehouse.query(
            "SELECT count() FROM system.parts WHERE database = currentDatabase() AND table = 'events'"
        ).result_rows[0][0]
    finally:
        warehouse.command("SYSTEM START MERGES events")
    assert parts <= 12, f"40 requests in sequence made {parts} inserts into events"
    # The inserts tell the rule apart (40 with a landing per request); the answers' time only bounds it,
    # loosely enough for a loaded machine.
    assert sorted(spent)[len(spent) // 2] < 0.25, f"the median request waited {sorted(spent)[20]:.3f} s"


def test_a_full_queue_answers_503(
    settings: Settings, warehouse: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    door = front_door(settings)
    monkeypatch.setattr(door_module, "MAX_ROWS_WAITING", 3)
    monkeypatch.setattr(door.state, "rows_spooled", 3)
    from stacklens.ingest.front_door import QueueFull

    with pytest.raises(QueueFull, match="rows waiting for the warehouse"):
        land(settings, error_line())
    monkeypatch.setattr(door.state, "rows_spooled", 0)


def test_journal_files_are_private(
    settings: Settings, warehouse: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    stopped = FrontDoor(settings)
    monkeypatch.setattr(
        stopped.drainer, "drain", lambda groups: (_ for _ in ()).throw(RuntimeError("killed"))
    )
    monkeypatch.setitem(doors._doors, doors._door_key(settings), stopped)
    land(settings, error_line())
    folder = settings.data_dir / "front_door"
    assert oct(folder.stat().st_mode & 0o777) == "0o700"
    assert [oct(path.stat().st_mode & 0o777) for path in Path(folder).glob("*.flush")] == ["0o600"]
    stopped.close(timeout=0)
    FrontDoor(settings).recover()


def test_a_request_is_answered_after_its_journal_and_the_spool_folder_are_synced(
    settings: Settings, warehouse: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 200 survives a power loss (issue #62): the real spool's journal file and its folder are fsynced
    before the request is answered. The drain is held, so the journal answered from stays to be read."""
    synced: list[Path] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced.append(Path(os.readlink(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    stopped = FrontDoor(settings)
    monkeypatch.setattr(stopped.drainer, "drain", lambda groups: (_ for _ in ()).throw(RuntimeError("held")))
    monkeypatch.setitem(doors._doors, doors._door_key(settings), stopped)
    monkeypatch.setattr(os, "fsync", fsync)
    assert land(settings, error_line()).accepted == 1
    answered = list(synced)  # the syncs done before the answer, whatever the drainer does after
    folder = (settings.data_dir / "front_door").resolve()
    [journal] = folder.glob("a-*.flush")
    assert answered.count(journal.with_suffix(".tmp")) == 1  # its data, under the name it was written as
    after = answered[answered.index(journal.with_suffix(".tmp")) + 1 :]
    assert folder in after  # then its name, in the folder
    stopped.close(timeout=0)
    FrontDoor(settings).recover()


@pytest.mark.parametrize("synced", [True, False])
def test_a_drain_puts_the_warehouse_on_disk_before_it_removes_a_journal(
    settings: Settings, warehouse: Client, monkeypatch: pytest.MonkeyPatch, synced: bool
) -> None:
    """A journal's removal must not reach the disk before the rows it held: the embedded engine does not
    sync its parts, so the drain syncs the warehouse's filesystem first (with STACKLENS_SPOOL_SYNC, the
    default), and only then removes the journal."""
    settings = settings.model_copy(update={"spool_sync": synced})
    steps: list[str] = []
    real_sync, real_remove = sync_filesystem, FlushJournal.remove

    def sync(path: Path) -> None:
        steps.append(f"sync {path}")
        real_sync(path)

    def remove(journal: FlushJournal, name: str) -> None:
        steps.append(f"remove {name[:1]}")
        real_remove(journal, name)

    monkeypatch.setattr(drain_module, "sync_filesystem", sync)
    monkeypatch.setattr(FlushJournal, "remove", remove)
    door = FrontDoor(settings)
    monkeypatch.setitem(doors._doors, doors._door_key(settings), door)
    assert land(settings, error_line()).accepted == 1
    assert count(warehouse, "events") == 1
    door.close(timeout=10)  # a door that stops keeps no landed journal
    warehouse_dir = urlsplit(settings.resolved_warehouse_url).path
    if synced:
        assert steps == [f"sync {warehouse_dir}", "remove a"]
    else:
        assert steps == ["remove a"]
    assert list((settings.data_dir / "front_door").glob("*.flush")) == []


def test_landed_journals_share_one_sync_of_the_warehouse(
    settings: Settings, warehouse: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sync of the warehouse's filesystem per drain cost ~0.2 s each on a busy disk: the journals landed
    within RETIRE_SECONDS wait for one sync together (and a stopping door syncs what is left)."""
    synced: list[int] = []

    def sync(path: Path) -> None:
        synced.append(len(list((settings.data_dir / "front_door").glob("*.flush"))))
        sync_filesystem(path)

    monkeypatch.setattr(drain_module, "sync_filesystem", sync)
    monkeypatch.setattr(drain_module, "RETIRE_SECONDS", 60.0)
    door = FrontDoor(settings)
    monkeypatch.setitem(doors._doors, doors._door_key(settings), door)
    door.drainer._retired_at = time.monotonic()  # as if a sync had just run
    for _ in range(3):
        assert land(settings, error_line()).accepted == 1
        while door.status()["rows_waiting"]:  # landed before the next: a drain, and a journal, each
            time.sleep(0.01)
    assert count(warehouse, "events") == 3
    assert synced == [] and len(list((settings.data_dir / "front_door").glob("*.flush"))) == 3
    assert door.settle()  # what tests and a shutdown wait for: the rows landed, their journals gone
    assert synced == [3]  # one sync for the three, then they went
    assert list((settings.data_dir / "front_door").glob("*.flush")) == []
