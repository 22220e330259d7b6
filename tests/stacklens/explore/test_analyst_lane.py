"""The analysts' lane takes a bounded share of the CPU (stacklens/explore/sql.py, LANE_NICE): every statement
of an Explore question carries the lane's CPU priority, and the engine runs a lane statement on a thread at
that priority — the front door's and the pages' statements keep theirs — giving it back afterwards. The
engine sets a thread's priority only with CAP_SYS_NICE (the tests run as root, as CI does)."""

from __future__ import annotations

import os
import threading
from typing import Any

from stacklens.explore.operator_sql import execute_read_only
from stacklens.explore.query_parser import parse_query
from stacklens.explore.run import run_explore
from stacklens.explore.sql import LANE_NICE, Limits
from stacklens.settings import Settings
from stacklens.warehouse.client import analyst_client, ensure_database, get_warehouse
from tests.stacklens.performance.perf_seed import migrated, seed

# A statement the engine takes ~0.4 s over (it sleeps between rows), long enough to see its thread.
SLOW = "SELECT sum(sleepEachRow(0.05)) AS slept FROM numbers(8)"


class Recording:
    """A warehouse client that notes each statement it is asked to run, and runs it."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.statements: list[str] = []

    def query(self, sql: str, *args: Any, **kwargs: Any) -> Any:
        self.statements.append(sql)
        return self.inner.query(sql, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_every_statement_of_an_explore_question_carries_the_lanes_priority(settings: Settings) -> None:
    seed(migrated(settings), 1, 11, loads=20, facts=False)
    question = parse_query(
        {
            "dataset": "pageloads",
            "group_by": ["browser"],
            "aggregates": [{"fn": "count"}],
            "since": "2026-11-01T00:00:00Z",
            "until": "2026-11-21T00:00:00Z",
            "interval": "1d",
        }
    )
    assert LANE_NICE > 0 and Limits().nice == LANE_NICE
    with analyst_client(settings) as client:
        recording = Recording(client)
        answer = run_explore(recording, question, 1, [11])
    assert answer.rows and answer.series, "the engine ran both statements with the setting"
    asked = [sql for sql in recording.statements if "org_id" in sql]
    assert len(asked) == 2, recording.statements  # the table and its series
    for sql in asked:
        assert f"os_thread_priority = {LANE_NICE}" in sql


def _niced_threads_while(run: Any, nice: int) -> set[int]:
    """The threads of this process seen at priority ``nice`` while ``run`` runs on a thread of its own."""
    done = threading.Event()
    failed: list[BaseException] = []

    def target() -> None:
        try:
            run()
        except BaseException as exc:  # noqa: BLE001 — the test's own thread: re-raised below
            failed.append(exc)
        finally:
            done.set()

    before = {int(t) for t in os.listdir("/proc/self/task") if _nice(int(t)) == nice}
    threading.Thread(target=target).start()
    seen: set[int] = set()
    while not done.wait(0.01):
        seen |= {int(t) for t in os.listdir("/proc/self/task") if _nice(int(t)) == nice}
    if failed:
        raise failed[0]
    return seen - before


def _nice(tid: int) -> int | None:
    try:
        return os.getpriority(os.PRIO_PROCESS, tid)
    except OSError:  # the thread ended meanwhile
        return None


def test_the_engine_runs_a_lane_statement_at_the_lanes_priority_and_others_at_theirs(
    settings: Settings,
) -> None:
    ensure_database(settings)
    lane = Limits(nice=13)  # a priority nothing else in the process runs at
    with analyst_client(settings) as client:
        lane_threads = _niced_threads_while(lambda: execute_read_only(client, SLOW, lane, 10), 13)
    assert lane_threads, "no engine thread ran the lane's statement at nice 13"
    assert threading.get_native_id() not in lane_threads
    left = {t for t in lane_threads if _nice(t) == 13}
    assert not left, f"threads kept the lane's priority after its statement: {left}"
    # The shared client (the pages' and the front door's reads) runs the same statement at its own priority.
    shared = get_warehouse(settings)
    assert not _niced_threads_while(lambda: shared.query(SLOW), 13)
