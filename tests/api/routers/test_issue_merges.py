"""Merge and split through the API (DESIGN §9.3): the merged issue's figures equal its stored events in the
list, the issue, its events and every insert-time table keyed by issue, after the merge and after the
split; new and re-sent events of a merged fingerprint land on the survivor (the real envelope endpoint, the
DSN key's overrides); merged ids answer 301; another organization's issue cannot be merged."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime
from typing import Any

from stacklens.ingest.front_door import settle_front_doors
from stacklens.ingest.front_door_drain import DRAIN_INTERVAL_SECONDS
from stacklens.ingest.grouping import issue_id_for
from stacklens.issues.regroup import regroup as real_regroup
from stacklens.settings import get_settings
from stacklens.warehouse.client import get_warehouse
from tests.api.routers.test_ingest import line, post
from tests.api.sentry_live import envelope, event_item
from tests.dashboards.conftest import client, org_factory, stores  # noqa: F401 - shared fixtures
from tests.dashboards.landing import land, sdk_event


def _timeout() -> None:
    raise TimeoutError("upstream took too long")


def _refused() -> None:
    raise ValueError("payment refused")


def _missing() -> None:
    raise KeyError("order 7")


def _stored(org_id: int, issue_id: int) -> dict[str, Any]:
    """The issue's figures computed from its stored events (what every reader must agree with)."""
    result = get_warehouse(get_settings()).query(
        "SELECT uniqExact(event_id), uniqExactIf(user_key, user_key != ''), min(timestamp), max(timestamp)"
        " FROM events FINAL WHERE org_id = {org:UInt64} AND issue_id = {issue:UInt64}",
        parameters={"org": org_id, "issue": issue_id},
    )
    events, users, first, last = result.result_rows[0]
    return {"events": int(events), "users": int(users), "first": first, "last": last}


def _table_events(org_id: int, issue_id: int) -> dict[str, int]:
    """Events each insert-time table counts for the issue (their own measure of events)."""
    warehouse = get_warehouse(get_settings())
    ids = {"org": org_id, "issue": issue_id}
    queries = {
        "issue_live_counters": "SELECT sum(events) FROM issue_live_counters WHERE org_id = {org:UInt64}"
        " AND issue_id = {issue:UInt64}",
        "issue_totals_daily": "SELECT sum(events) FROM issue_totals_daily WHERE issue_id = {issue:UInt64}",
        "issue_tags_daily": "SELECT sum(events) FROM issue_tags_daily WHERE issue_id = {issue:UInt64}"
        " AND tag_key = 'tenant'",
    }
    return {
        name: int(warehouse.query(sql, parameters=ids).result_rows[0][0] or 0)
        for name, sql in queries.items()
    }


def _iso(value: datetime) -> str:
    return value.replace(tzinfo=UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _agrees(api: Any, org_id: int, issue_id: int) -> None:
    body = api.get(f"/api/issues/{issue_id}").json()
    truth = _stored(org_id, issue_id)
    assert (body["events"], body["users"]) == (truth["events"], truth["users"])
    assert (body["first_seen"], body["last_seen"]) == (_iso(truth["first"]), _iso(truth["last"]))
    assert _table_events(org_id, issue_id) == {
        "issue_live_counters": truth["events"],
        "issue_totals_daily": truth["events"],
        "issue_tags_daily": truth["events"],  # every event carries the tenant tag
    }
    events = api.get(f"/api/issues/{issue_id}/events", params={"limit": 100}).json()["events"]
    assert len(events) == truth["events"]


class _Api:
    def __init__(self, client: Any, key: str) -> None:  # noqa: F811
        self.client, self.headers = client, {"Authorization": f"Bearer {key}"}

    def get(self, path: str, **kwargs: Any) -> Any:
        return self.client.get(path, headers=self.headers, follow_redirects=False, **kwargs)

    def post(self, path: str, body: Any) -> Any:
        return self.client.post(path, headers=self.headers, json=body)


def _landed(org: dict[str, Any]) -> tuple[dict[str, int], list[dict[str, Any]]]:
    """3 timeouts (users u1, u2), 2 refusals (u2, u3), 1 missing order: issue id per kind and the payloads."""
    plan = [(_timeout, "u1"), (_timeout, "u2"), (_timeout, None), (_refused, "u2"), (_refused, "u3")]
    plan.append((_missing, "u4"))
    payloads = [
        sdk_event(f, user={"id": u} if u else None, tags={"tenant": f"t{n % 2}"})
        for n, (f, u) in enumerate(plan)
    ]
    rows = land(org["org_id"], org["project_id"], payloads)
    ids = {"timeout": rows[0]["issue_id"], "refused": rows[3]["issue_id"], "missing": rows[5]["issue_id"]}
    return ids, payloads


def test_merge_then_split_keeps_every_figure_equal_to_the_events(client, org_factory) -> None:  # noqa: F811
    org = org_factory("Merging")
    api = _Api(client, org["api_key"])
    ids, _ = _landed(org)
    timeout, refused, missing = ids["timeout"], ids["refused"], ids["missing"]

    bad = api.post("/api/issues/merge", {"ids": [str(timeout)]})
    assert bad.status_code == 400 and "ids" in bad.json()["detail"]
    merged = api.post("/api/issues/merge", {"ids": [str(refused), str(timeout)]})
    assert merged.status_code == 200, merged.text
    body = merged.json()
    # The survivor is the issue with the most events; the other is merged into it.
    assert body["id"] == str(timeout) and body["merged"] == [str(refused)]
    assert (body["events"], body["users"]) == (5, 3)
    _agrees(api, org["org_id"], timeout)

    listed = api.get(f"/api/projects/{org['project']}/issues", params={"sort": "events"}).json()["issues"]
    assert [(i["id"], i["events"], i["users"]) for i in listed] == [
        (str(timeout), 5, 3),
        (str(missing), 1, 1),
    ]

    moved = api.get(f"/api/issues/{refused}")
    assert moved.status_code == 301
    assert moved.headers["location"] == f"/api/issues/{timeout}" and moved.json()["merged_into"] == str(
        timeout
    )
    assert api.get(f"/api/issues/{refused}/events").headers["location"] == f"/api/issues/{timeout}/events"

    # Split the refusals back out by their exception type: they get their own issue (and id) again.
    split = api.post(f"/api/issues/{timeout}/split", {"exception_types": ["ValueError"]})
    assert split.status_code == 200, split.text
    out = split.json()
    assert out["issue"]["events"] == 3 and [(i["id"], i["events"]) for i in out["issues"]] == [
        (str(refused), 2)
    ]
    for issue_id in (timeout, refused, missing):
        _agrees(api, org["org_id"], issue_id)
    assert api.get(f"/api/issues/{refused}").status_code == 200
    nothing = api.post(f"/api/issues/{timeout}/split", {"fingerprints": ["f" * 32]})
    assert nothing.status_code == 400 and "fingerprints" in nothing.json()["detail"]


def test_new_and_resent_events_follow_the_merge(client, org_factory) -> None:  # noqa: F811
    org = org_factory("Following")
    api = _Api(client, org["api_key"])
    ids, payloads = _landed(org)
    timeout, refused = ids["timeout"], ids["refused"]
    assert api.post("/api/issues/merge", {"ids": [str(timeout), str(refused)]}).status_code == 200
    url = f"/api/{org['project_id']}/envelope/"
    key = {"sentry_key": org["app_key"]}

    # A new refusal (the merged fingerprint) through the real DSN endpoint lands on the survivor.
    fresh = {**sdk_event(_refused, user={"id": "u9"}, tags={"tenant": "t0"}), "event_id": uuid.uuid4().hex}
    assert client.post(url, params=key, content=envelope([event_item(fresh)])).status_code == 200
    # The stored refusals sent again: the same event ids land nothing twice, and their figures stay one
    # issue's.
    for payload in payloads[3:5]:  # one event per envelope, as Sentry's SDKs send them
        assert client.post(url, params=key, content=envelope([event_item(payload)])).status_code == 200
    # And one shipped by the log shipper (`POST /api/ingest`, the app key's overrides).
    shipped = {**sdk_event(_refused, user={"id": "u8"}, tags={"tenant": "t1"}), "event_id": uuid.uuid4().hex}
    assert post(client, org["api_key"], line(shipped, org["app_key"])).status_code == 200
    assert settle_front_doors()  # read directly below, not through a reader that waits for its own writes
    for event_id in (fresh["event_id"], shipped["event_id"]):
        row = get_warehouse(get_settings()).query(
            "SELECT issue_id, fingerprint FROM events FINAL WHERE event_id = {id:String}",
            parameters={"id": event_id},
        )
        ((stored_issue, fingerprint),) = row.result_rows
        # Grouping stayed frozen: the fingerprint is the refusal's own, only the issue follows the merge.
        assert issue_id_for(org["project_id"], fingerprint) == refused and stored_issue == timeout
    _agrees(api, org["org_id"], timeout)
    assert api.get(f"/api/issues/{timeout}").json()["events"] == 7


def test_another_organizations_issue_cannot_be_merged(client, org_factory) -> None:  # noqa: F811
    mine, theirs = org_factory("Mine"), org_factory("Theirs")
    my_ids, _ = _landed(mine)
    their_ids, _ = _landed(theirs)
    api = _Api(client, mine["api_key"])
    refused = api.post("/api/issues/merge", {"ids": [str(my_ids["timeout"]), str(their_ids["refused"])]})
    assert refused.status_code == 404
    assert _stored(theirs["org_id"], their_ids["refused"])["events"] == 2
    assert _stored(mine["org_id"], my_ids["timeout"])["events"] == 3
    assert api.post(f"/api/issues/{their_ids['timeout']}/split", {"fingerprints": ["x"]}).status_code == 404


def test_an_event_answered_during_a_merge_lands_after_it_once(client, org_factory, monkeypatch) -> None:  # noqa: F811
    """The front door's drains are held while the moved issues' tables are cleared and fed again: an event
    answered 200 then lands after the regroup, on the survivor, and every table counts it once."""
    org = org_factory("Busy merge")
    api = _Api(client, org["api_key"])
    ids, _ = _landed(org)
    timeout, refused = ids["timeout"], ids["refused"]
    fresh = {**sdk_event(_refused, user={"id": "u7"}, tags={"tenant": "t0"}), "event_id": uuid.uuid4().hex}
    seen_during: list[int] = []

    def busy_regroup(*args: Any, **kwargs: Any) -> None:
        # An SDK's event arrives while the merge moves the stored events: answered (spooled), not landed.
        sent = client.post(
            f"/api/{org['project_id']}/envelope/",
            params={"sentry_key": org["app_key"]},
            content=envelope([event_item(fresh)]),
        )
        assert sent.status_code == 200, sent.text
        time.sleep(3 * DRAIN_INTERVAL_SECONDS)  # long enough for a drain that was not held
        seen_during.append(_count_event(fresh["event_id"]))
        real_regroup(*args, **kwargs)

    monkeypatch.setattr("stacklens.issues.merges.regroup", busy_regroup)
    merged = api.post("/api/issues/merge", {"ids": [str(timeout), str(refused)]})
    assert merged.status_code == 200, merged.text
    assert seen_during == [0]
    assert settle_front_doors(30)
    assert _count_event(fresh["event_id"]) == 1
    assert _stored(org["org_id"], timeout)["events"] == 6
    _agrees(api, org["org_id"], timeout)


def _count_event(event_id: str) -> int:
    return int(
        get_warehouse(get_settings())
        .query("SELECT count() FROM events WHERE event_id = {id:String}", parameters={"id": event_id})
        .result_rows[0][0]
    )
