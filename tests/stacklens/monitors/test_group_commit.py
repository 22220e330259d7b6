"""Group commit of check-ins: concurrent requests' check-ins land in fewer transactions than requests, each
request answered with its own ids once its transaction committed; one request's refusal is its own."""

from __future__ import annotations

import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import pytest
from sqlalchemy import func, select

from stacklens.control.db import session_scope
from stacklens.control.models import Project
from stacklens.control.models.monitors import MonitorCheckIn
from stacklens.monitors.checkins import record_all
from stacklens.monitors.errors import MonitorInputError
from stacklens.monitors.group_commit import Group, Job, group_for
from stacklens.monitors.store import create_monitor
from stacklens.outbound import AllowList
from stacklens.settings import Settings


def test_concurrent_submits_share_transactions_and_keep_their_own_answers() -> None:
    writes: list[int] = []

    def write(batch: list[Job[int, int]]) -> None:
        time.sleep(0.02)  # a commit's fsync: the time requests pile up in
        writes.append(len(batch))
        for job in batch:
            if job.work == 13:
                job.error = ValueError("thirteen")
            else:
                job.result = job.work * 2

    group: Group[int, int] = Group(write)
    start = threading.Barrier(24)

    def submit(n: int) -> int | str:
        start.wait()
        try:
            return group.submit(n)
        except ValueError as exc:
            return str(exc)

    with ThreadPoolExecutor(24) as pool:
        answers = list(pool.map(submit, range(24)))
    assert answers == [n * 2 if n != 13 else "thirteen" for n in range(24)]
    assert sum(writes) == 24 and len(writes) < 12, writes  # shared transactions
    assert not group.writing and not group.pending

    def broken(batch: list[Job[int, int]]) -> None:
        raise RuntimeError("disk I/O error")

    with pytest.raises(RuntimeError, match="disk I/O"):
        Group(broken).submit(1)


def test_record_all_from_many_threads_records_every_check_in(stores: Settings, org_factory) -> None:
    org = org_factory()
    with session_scope(stores) as session:
        project = session.get(Project, org["project_id"])
        assert project is not None
        create_monitor(
            session, project, {"slug": "site", "kind": "uptime", "url": "https://example.com/"}, AllowList()
        )
    now = datetime.now(UTC)
    start = threading.Barrier(16)

    def send(n: int) -> list[str] | str:
        start.wait()
        slug = "site" if n == 5 else f"job-{n % 4}"
        try:
            return record_all(
                stores, org["org_id"], org["project_id"], [{"monitor_slug": slug, "status": "ok"}], now
            )
        except MonitorInputError as exc:
            return exc.field

    record_all(stores, org["org_id"], org["project_id"], [{"monitor_slug": "job-0"}], now)  # the group made
    group = group_for(
        ("checkins", stores.database_url, stores.data_dir), lambda batch: None
    )  # found, not made
    before = group.batches
    with ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(send, range(16)))
    assert answers[5] == "monitor_slug", answers  # an uptime monitor takes no check-ins: refused alone
    ids = [a[0] for n, a in enumerate(answers) if n != 5]
    assert all(isinstance(i, str) and uuid.UUID(i) for i in ids)
    with session_scope(stores) as session:
        stored = session.scalar(
            select(func.count()).select_from(MonitorCheckIn).where(MonitorCheckIn.org_id == org["org_id"])
        )
    assert stored == 16
    assert group.batches - before < 16  # fewer transactions than requests


def test_a_leader_stopped_by_any_exception_hands_on_and_the_loop_never_writes() -> None:
    """A write ended by a BaseException (a cancellation, the event loop's WouldBlock) still answers its batch
    and hands the lead on: the next check-in of the store is written, not left waiting for good. On the event
    loop a check-in asks to run elsewhere before it joins any batch."""
    from stacklens.blocking import WouldBlock, loop_only

    class Stop(BaseException):
        pass

    calls: list[int] = []

    def write(batch: list[Job[int, int]]) -> None:
        calls.append(len(batch))
        if len(calls) == 1:
            raise Stop()
        for job in batch:
            job.result = job.work

    group: Group[int, int] = Group(write)
    with pytest.raises(Stop):
        group.submit(1)
    with ThreadPoolExecutor(1) as pool:
        assert pool.submit(group.submit, 2).result(timeout=5) == 2
    with loop_only(), pytest.raises(WouldBlock):
        group.submit(3)
    assert calls == [1, 1] and not group.pending and not group.writing
