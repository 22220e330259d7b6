"""Merges and splits of the same issues at once (issue #62), with the control store on SQLite and PostgreSQL,
the real embedded warehouse and the real front door's hold: up to ten trials of two threads merging
overlapping issues at the same moment, until one was refused. Each trial ends consistent whatever the order:
one merge refused with 409 (``GroupingBusy``, nothing changed) or both run one after the other; no override
points an issue at itself or at an issue merged away; every fingerprint's events are in one issue, the one its
override names; every insert-time table counts each stored event once. A split crossing a merge of the same
issue is refused too."""

from __future__ import annotations

import threading
from functools import partial
from typing import Any

import pytest
from clickhouse_connect.driver.client import Client

from stacklens.control.db import session_scope
from stacklens.control.grouping_claims import GroupingBusy
from stacklens.control.issue_merges import overrides_of
from stacklens.errors import NotFound
from stacklens.ingest.front_door import landing_held
from stacklens.ingest.grouping import issue_id_for
from stacklens.issues.merges import merge, split
from stacklens.settings import Settings
from tests.dashboards.landing import land, sdk_event
from tests.stacklens.issues.test_merges import COUNTED, _figures

TRIALS = 10


def _raise() -> None:
    raise RuntimeError("crossing")


def _issues(org: int, project: int, trial: int) -> dict[str, int]:
    """Three issues of the trial's own fingerprints: a (1 event), b (2), c (3)."""
    payloads = []
    for name, events in (("a", 1), ("b", 2), ("c", 3)):
        for _ in range(events):
            payloads.append({**sdk_event(_raise), "fingerprint": [f"trial-{trial}-{name}"]})
    rows = land(org, project, payloads)
    return {"a": rows[0]["issue_id"], "b": rows[1]["issue_id"], "c": rows[3]["issue_id"]}


def _at_once(*calls: Any) -> list[Any]:
    """Run ``calls`` in threads released together; each one's result or the exception it raised."""
    start = threading.Barrier(len(calls))
    out: list[Any] = [None] * len(calls)

    def run(n: int) -> None:
        start.wait()
        try:
            out[n] = calls[n]()
        except Exception as exc:  # noqa: BLE001 - the outcome under test
            out[n] = exc

    threads = [threading.Thread(target=run, args=(n,)) for n in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    return out


def _consistent(settings: Settings, warehouse: Client, project: int, issues: list[int]) -> None:
    with session_scope(settings) as session:
        overrides = overrides_of(session, project)
    merged_away = {issue_id_for(project, fp) for fp in overrides}
    for fp, target in overrides.items():
        assert target != issue_id_for(project, fp), f"override of {fp} points its issue at itself"
        assert target not in merged_away, f"override of {fp} names {target}, merged away (a chain)"
    per_fp = warehouse.query(
        "SELECT fingerprint, groupUniqArray(issue_id) FROM events FINAL WHERE project_id = {p:UInt64}"
        " GROUP BY fingerprint",
        parameters={"p": project},
    ).result_rows
    for fp, held_by in per_fp:
        assert held_by == [overrides.get(fp, issue_id_for(project, fp))], f"fingerprint {fp} split: {held_by}"
    for issue in issues:
        figures = _figures(warehouse, project, issue)
        assert figures == dict.fromkeys(["stored", *COUNTED], figures["stored"]), (issue, figures)


def _merge(settings: Settings, warehouse: Client, org: int, ids: list[int]) -> Any:
    with session_scope(settings) as session:
        return merge(
            session, warehouse, org, ids, actor="t@example.test", hold_landing=partial(landing_held, settings)
        )


def test_crossing_merges_serialize(control_settings: Settings, make_org, warehouse: Client) -> None:
    mine = make_org("Crossing")
    org, project = mine["org_id"], mine["project_id"]
    refused = 0
    for trial in range(TRIALS):
        ids = _issues(org, project, trial)
        a, b, c = ids["a"], ids["b"], ids["c"]
        first, second = _at_once(
            partial(_merge, control_settings, warehouse, org, [a, b]),
            partial(_merge, control_settings, warehouse, org, [b, c]),
        )
        outcomes = [type(x).__name__ for x in (first, second)]
        done = [x for x in (first, second) if not isinstance(x, Exception)]
        assert done, outcomes
        for other in (first, second):
            if isinstance(other, Exception):
                # Refused while the other ran, or run after it on an issue it merged away: nothing changed.
                assert isinstance(other, GroupingBusy | NotFound), outcomes
                if isinstance(other, GroupingBusy):
                    refused += 1
                    assert "in progress" in str(other) and "send it again" in str(other)
        _consistent(control_settings, warehouse, project, [a, b, c])
        survivors = {r.target for r in done}
        # c (3 events) survives when both ran; otherwise the one merge's largest.
        assert survivors <= {b, c}
        if refused:  # observed: each trial checked everything, so further trials would only repeat it
            break
    # Released together, the second nearly always finds the first running.
    assert refused >= 1


def test_a_split_crossing_a_merge_of_its_issue(
    control_settings: Settings, make_org, warehouse: Client
) -> None:
    mine = make_org("Crossing split")
    org, project = mine["org_id"], mine["project_id"]
    ids = _issues(org, project, 99)
    a, b, c = ids["a"], ids["b"], ids["c"]
    first = _merge(control_settings, warehouse, org, [a, b])
    assert first.target == b

    def split_a() -> Any:
        with session_scope(control_settings) as session:
            return split(
                session,
                warehouse,
                org,
                b,
                fingerprints=first.fingerprints,
                actor="t@example.test",
                hold_landing=partial(landing_held, control_settings),
            )

    outcomes = _at_once(split_a, partial(_merge, control_settings, warehouse, org, [b, c]))
    assert any(not isinstance(x, Exception) for x in outcomes), outcomes
    for x in outcomes:
        assert not isinstance(x, Exception) or isinstance(x, GroupingBusy | NotFound | ValueError), x
    _consistent(control_settings, warehouse, project, [a, b, c])


def test_a_claim_refuses_a_second_merge_of_the_project(
    control_settings: Settings, make_org, warehouse: Client
) -> None:
    from stacklens.control.grouping_claims import grouping_claimed

    mine = make_org("Claimed")
    org, project = mine["org_id"], mine["project_id"]
    ids = _issues(org, project, 7)
    with session_scope(control_settings) as holder, grouping_claimed(holder, project):
        with pytest.raises(GroupingBusy, match="in progress"):
            _merge(control_settings, warehouse, org, [ids["a"], ids["b"]])
        with session_scope(control_settings) as session:
            assert overrides_of(session, project) == {}
    assert _merge(control_settings, warehouse, org, [ids["a"], ids["b"]]).target == ids["b"]
    _consistent(control_settings, warehouse, project, list(ids.values()))
