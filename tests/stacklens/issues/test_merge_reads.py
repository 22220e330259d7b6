"""The reads of what merges recorded, with the control store on SQLite and PostgreSQL and the real embedded
warehouse: a merged-away id leads to its survivor, the survivor's fingerprints (its own and the merged ones)
are what event reads filter on, its "Merged issues" count their events now (a fingerprint whose events are
gone keeps its recorded type, with 0), and another organization reads none of it."""

from __future__ import annotations

from datetime import UTC, datetime

from clickhouse_connect.driver.client import Client

from stacklens.control.db import session_scope
from stacklens.control.models import IssueMerge
from stacklens.ingest.grouping import issue_id_for
from stacklens.issues.merge_reads import (
    fingerprints_in,
    fingerprints_of,
    merged_fingerprints,
    merged_groups,
    merged_into,
)
from stacklens.issues.merges import merge
from stacklens.settings import Settings
from tests.dashboards.landing import land, sdk_event


def _a() -> None:
    raise KeyError("a")


def _b() -> None:
    raise ValueError("b")


def _c() -> None:
    raise TypeError("c")


def test_the_reads_of_a_merge(control_settings: Settings, make_org, warehouse: Client) -> None:
    mine, theirs = make_org("Mine"), make_org("Theirs")
    org, project, other = mine["org_id"], mine["project_id"], theirs["org_id"]
    rows = land(
        org, project, [sdk_event(_a), sdk_event(_b), sdk_event(_b), *[sdk_event(_c) for _ in range(3)]]
    )
    a, b, c = rows[0]["issue_id"], rows[1]["issue_id"], rows[3]["issue_id"]
    fp = {a: rows[0]["fingerprint"], b: rows[1]["fingerprint"], c: rows[3]["fingerprint"]}
    with session_scope(control_settings) as session:
        # Before any merge: nothing redirects, an issue holds only its own fingerprint, no "Merged issues".
        assert merged_into(session, org, a) is None
        assert fingerprints_of(session, org, project, c, fp[c]) == [fp[c]]
        assert merged_groups(session, warehouse, org, project, c) == []

        merge(session, warehouse, org, [a, b, c], into=c, actor="alice@example.test")

        assert merged_into(session, org, a) == (project, c)
        assert merged_into(session, org, b) == (project, c)
        assert merged_into(session, org, c) is None  # the survivor keeps its id
        assert merged_into(session, other, a) is None
        recorded = merged_fingerprints(session, org, project, c)
        assert sorted(r.fingerprint for r in recorded) == sorted([fp[a], fp[b]])
        assert {r.merged_by for r in recorded} == {"alice@example.test"}
        assert merged_fingerprints(session, other, project, c) == []
        assert fingerprints_of(session, org, project, c, fp[c]) == sorted(fp.values())
        # The survivor's own fingerprint left (its events merged away elsewhere): only the merged ones.
        assert fingerprints_of(session, org, project, c, "") == sorted([fp[a], fp[b]])

        stored = fingerprints_in(warehouse, org, project, [c])
        assert [(f.fingerprint, f.own_issue_id, f.exception_type, f.events) for f in stored] == [
            (fp[c], c, "TypeError", 3),
            (fp[b], b, "ValueError", 2),
            (fp[a], a, "KeyError", 1),
        ]
        assert fingerprints_in(warehouse, other, project, [c]) == []
        assert fingerprints_in(warehouse, org, project, [a, b]) == []  # their events moved to c

        groups = merged_groups(session, warehouse, org, project, c)
        assert [(g.fingerprint, g.own_issue_id, g.exception_type, g.events) for g in groups] == [
            (fp[b], b, "ValueError", 2),
            (fp[a], a, "KeyError", 1),
        ]
        assert merged_groups(session, warehouse, other, project, c) == []

        # A merged fingerprint whose stored events are gone (retention dropped them) is still listed, with
        # the type recorded when it was merged and no events, after those that have some.
        gone = "f" * 32
        session.add(
            IssueMerge(
                org_id=org,
                project_id=project,
                fingerprint=gone,
                source_issue_id=issue_id_for(project, gone),
                target_issue_id=c,
                exception_type="OSError",
                merged_at=datetime.now(UTC),
                merged_by="bob@example.test",
            )
        )
        session.flush()
        groups = merged_groups(session, warehouse, org, project, c)
        assert [(g.fingerprint, g.exception_type, g.events, g.merged_by) for g in groups][-1] == (
            gone,
            "OSError",
            0,
            "bob@example.test",
        )
        assert len(groups) == 3
