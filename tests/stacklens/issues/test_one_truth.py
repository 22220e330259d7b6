"""An issue's figures are one truth: for random event times, users and messages and for every named range, the
issue list (API and page), one issue (API and page: its figures, its chart and its title), Explore over the
page's window, an event-frequency alert rule of the same length, related issues and the release pages (each
issue new in one release, with its lifetime figures) give each issue the same events, users, first and last
seen and title — and each equals a query of the stored events over the window the metrics layer defines
(stacklens.metrics.windows: rolling, whole minutes, closed-open; first / last seen and title the issue's own).

Event times are random over 20 days (so windows cut days at every hour, across midnights), kept a few
minutes away from the windows' edges so a minute passing during the test cannot move an event in or out.
Events land in random order (receive order is not event order), some share a timestamp (the title's
tie-break), some carry no user. Then two issues are merged into the one whose latest event is the older: the
survivor keeps its own title (its own events' latest), not the merged events' newer one, in every consumer
(issue 71)."""

from __future__ import annotations

import html
import json
import random
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import dagster as dg
import pytest

from pipelines.assets.issues import issues as issues_asset
from pipelines.assets.issues import related_issues as related_asset
from pipelines.resources import resources_for
from stacklens.alerts import issue_measures
from stacklens.control.models.alerts import AlertRule
from stacklens.ingest.grouping import issue_id_for
from stacklens.issues.reads import RANGES
from stacklens.metrics import windows
from stacklens.warehouse.client import get_warehouse
from tests.dashboards.conftest import sign_in
from tests.dashboards.landing import land, sdk_event

CHECKED = ("1h", "24h", "7d", "14d", "30d")
RELEASES = ("shop@1.2.0", "shop@1.3.0")
MARGIN = timedelta(minutes=3)


def _timeout(ms: int) -> None:
    raise TimeoutError(f"timed out after {ms} ms")


def _payment(amount: str) -> None:
    raise ValueError(f"payment of {amount} EUR refused")


def _lookup(key: int) -> None:
    raise KeyError(f"order {key}")


def _payload(rng: random.Random, when: datetime) -> dict[str, Any]:
    kind = rng.randrange(3)
    if kind == 0:
        ms = rng.randrange(1000, 9000)
        func: Any = lambda: _timeout(ms)  # noqa: E731 - one raise per event
    elif kind == 1:
        amount = f"{rng.randrange(100, 9000)}.{rng.randrange(100):02d}"
        func = lambda: _payment(amount)  # noqa: E731
    else:
        key = rng.randrange(10_000)
        func = lambda: _lookup(key)  # noqa: E731
    user = rng.choice([None, "u1", "u2", "u3", "u4", "u5", "u6"])
    payload = sdk_event(
        func,
        user={"id": user} if user else None,
        environment=rng.choice(["prod", "staging"]),
        release=rng.choice(RELEASES),
    )
    payload["timestamp"] = when.isoformat().replace("+00:00", "Z")
    return payload


def _times(rng: random.Random, now: datetime, n: int) -> list[datetime]:
    """``n`` random times over the last 20 days (denser lately), none within MARGIN of a checked window's
    start or of now; a few repeated (events of one moment)."""
    edges = [now - RANGES[r] for r in CHECKED] + [now]
    out: list[datetime] = []
    while len(out) < n:
        if out and rng.random() < 0.1:
            out.append(rng.choice(out))
            continue
        # Every checked window holds events: a fifth in the last two hours, a fifth in the last two days.
        span = rng.choice([2 * 3600, 2 * 86400, 20 * 86400, 20 * 86400, 20 * 86400])
        moment = now - timedelta(seconds=rng.uniform(0, span))
        moment = moment.replace(microsecond=moment.microsecond // 1000 * 1000)
        if all(abs(moment - edge) > MARGIN for edge in edges):
            out.append(moment)
    return out


def _reference(
    warehouse: Any, project_id: int, since: datetime, until: datetime
) -> dict[int, tuple[Any, ...]]:
    """Per issue with an event in [since, until): events, users, first seen, last seen, title — from the
    stored events, by the definitions of stacklens.metrics.issue_figures (the title: the latest of the issue's
    own events, those whose fingerprint gives it by itself — known here from the grouping's own derivation —
    else its latest event's)."""
    fingerprints = warehouse.query(
        "SELECT DISTINCT fingerprint FROM events WHERE project_id = {p:UInt64}", parameters={"p": project_id}
    ).result_rows
    own = [(str(f), issue_id_for(project_id, str(f))) for (f,) in fingerprints]
    rows = warehouse.query(
        "SELECT issue_id, countIf(timestamp >= {s:DateTime64(3, 'UTC')} AND timestamp < {u:DateTime64(3, 'UTC')}),"
        " uniqExactIf(user_key, user_key != '' AND timestamp >= {s:DateTime64(3, 'UTC')}"
        " AND timestamp < {u:DateTime64(3, 'UTC')}),"
        " min(timestamp), max(timestamp), argMax(title, (timestamp, event_id)),"
        " argMaxIf(title, (timestamp, event_id), (fingerprint, issue_id) IN {own:Array(Tuple(String, UInt64))}),"
        " countIf((fingerprint, issue_id) IN {own:Array(Tuple(String, UInt64))})"
        " FROM events WHERE project_id = {p:UInt64} GROUP BY issue_id",
        parameters={
            "p": project_id,
            "s": since.replace(tzinfo=None),
            "u": until.replace(tzinfo=None),
            "own": own,
        },
    ).result_rows
    return {
        int(r[0]): (int(r[1]), int(r[2]), windows.utc(r[3]), windows.utc(r[4]), str(r[6] if r[7] else r[5]))
        for r in rows
        if r[1]
    }


def _merge_renaming(
    app_client: Any, auth: dict[str, str], warehouse: Any, project_id: int
) -> tuple[int, str]:
    """Merge two issues into the one whose latest event is the older (the merged one's newer events would
    rename it if titles followed the latest event): the survivor and its title before the merge."""
    now = datetime.now(UTC) + timedelta(minutes=1)
    before = _reference(warehouse, project_id, now - timedelta(days=365), now)
    older, newer = sorted(before, key=lambda i: before[i][3])[:2]
    merged = app_client.post(
        "/api/issues/merge", headers=auth, json={"ids": [str(newer), str(older)], "into": str(older)}
    )
    assert merged.status_code == 200, merged.text
    assert merged.json()["id"] == str(older) and merged.json()["merged"] == [str(newer)]
    after = _reference(warehouse, project_id, now - timedelta(days=365), now)
    assert newer not in after and after[older][4] == before[older][4] != before[newer][4]
    # The stored events alone would name the survivor by the merged issue's newer event.
    latest = warehouse.query(
        "SELECT argMax(title, (timestamp, event_id)) FROM events"
        " WHERE project_id = {p:UInt64} AND issue_id = {i:UInt64}",
        parameters={"p": project_id, "i": older},
    ).result_rows[0][0]
    assert latest == before[newer][4]
    return older, str(before[older][4])


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _release_new_issues(page: str) -> dict[int, tuple[str, int, int]]:
    """Per issue of a release page's "New in" table: title, events, users."""
    section = re.search(r'<section class="card" id="new-issues">(.*?)</section>', page, re.S)
    assert section is not None
    out = {}
    for row in re.findall(
        r"<tr><td><a href=\"[^\"]*/issues/(\d+)\">([^<]*)</a>(.*?)</tr>", section.group(1), re.S
    ):
        cells = re.findall(r'<td class="num">([^<]*)</td>', row[2])
        out[int(row[0])] = (
            html.unescape(row[1]),
            int(cells[0].replace(",", "")),
            int(cells[1].replace(",", "")),
        )
    return out


def _page_time(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%d %H:%M:%S UTC").replace(tzinfo=UTC)


def _list_page_rows(page: str) -> dict[int, tuple[Any, ...]]:
    """Per issue row of the list page: title, events, users, first seen, last seen (to the second)."""
    out = {}
    for row in re.findall(r'<tr class="issue-row">(.*?)</tr>', page, re.S):
        issue_id = int(re.search(r'name="issue_ids" value="(\d+)"', row).group(1))
        title = html.unescape(re.search(r'class="issue-title"[^>]*>([^<]*)</a>', row).group(1))
        cells = [
            html.unescape(re.sub(r"<[^>]+>", "", c)).strip()
            for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
        ]
        out[issue_id] = (
            title,
            int(cells[-4].replace(",", "")),
            int(cells[-3].replace(",", "")),
            cells[-2],
            cells[-1],
        )
    return out


@pytest.mark.parametrize("seed", [7, 2026])
def test_every_consumer_gives_each_issue_one_set_of_figures(stores, app_client, org_factory, seed) -> None:
    rng = random.Random(seed)
    org = org_factory("Truth")
    warehouse = get_warehouse(stores)
    now = datetime.now(UTC)
    payloads = [_payload(rng, when) for when in _times(rng, now, 90)]
    rng.shuffle(payloads)  # received in another order than they happened
    for start in range(0, len(payloads), 7):  # several batches, each sharing a receive time
        land(org["org_id"], org["project_id"], payloads[start : start + 7])
    auth = {"Authorization": f"Bearer {org['api_key']}"}
    sign_in(app_client, org["email"])
    base = f"/orgs/{org['org_slug']}/projects/{org['project']}/issues"
    survivor, own_title = _merge_renaming(app_client, auth, warehouse, org["project_id"])

    # Release pages list the issues first seen in each release with their figures over their whole life: every
    # issue is new in exactly one release, with the stored events' title, events and users.
    assert dg.materialize(
        [issues_asset, related_asset], resources={"warehouse": resources_for(stores)["warehouse"]}
    ).success
    lifetime = _reference(warehouse, org["project_id"], now - timedelta(days=365), now + timedelta(minutes=1))
    releases_base = f"/orgs/{org['org_slug']}/projects/{org['project']}/releases"
    new_in: dict[int, tuple[str, int, int]] = {}
    for version in RELEASES:
        page = app_client.get(f"{releases_base}/{version}", params={"range": "30d"})
        assert page.status_code == 200, version
        found = _release_new_issues(page.text)
        assert not set(found) & set(new_in), version
        new_in.update(found)
    assert new_in == {k: (v[4], v[0], v[1]) for k, v in lifetime.items()}
    assert lifetime[survivor][4] == own_title and new_in[survivor][0] == own_title
    # Related issues name each issue by the same title (issues sharing users here: every pair shares one).
    related_titles = []
    for issue_id in lifetime:
        page = app_client.get(f"{base}/{issue_id}").text
        section = re.search(r'<section class="card" id="related">(.*?)</section>', page, re.S)
        assert section is not None
        for related_id, title in re.findall(r'<a href="[^"]*/issues/(\d+)">([^<]*)</a>', section.group(1)):
            related_titles.append((int(related_id), html.unescape(title)))
    assert related_titles and all(lifetime[i][4] == title for i, title in related_titles), related_titles

    for name in CHECKED:
        listed = app_client.get(
            f"/api/projects/{org['project']}/issues",
            headers=auth,
            params={"range": name, "status": "all", "limit": 100},
        ).json()["issues"]
        assert listed, name
        since, until = _time(listed[0]["since"]), _time(listed[0]["until"])
        # The range's window as the metrics layer cuts it: rolling up to now, whole minutes.
        assert since.second == until.second == 0 and until >= now
        assert RANGES[name] <= until - since <= RANGES[name] + timedelta(minutes=1)
        expected = _reference(warehouse, org["project_id"], since, until)
        api_list = {
            int(i["id"]): (i["events"], i["users"], _time(i["first_seen"]), _time(i["last_seen"]), i["title"])
            for i in listed
        }
        assert api_list == expected, name

        page_rows = _list_page_rows(
            app_client.get(base, params={"range": name, "status": "all", "per_page": 100}).text
        )
        assert {k: (v[1], v[2], _page_time(v[3]), _page_time(v[4]), v[0]) for k, v in page_rows.items()} == {
            k: (e, u, f.replace(microsecond=0), la.replace(microsecond=0), t)
            for k, (e, u, f, la, t) in expected.items()
        }, name

        rule = AlertRule(
            project_id=org["project_id"],
            type="event_frequency",
            window_seconds=int(RANGES[name].total_seconds()),
            filters={},
            environment="",
            count_kind="events",
        )
        (alerted,) = issue_measures.frequencies(warehouse, [[rule]], now)
        assert {i: (e, u, t) for i, e, u, _, t in alerted.get(org["project_id"], [])} == {
            k: (v[0], v[1], v[4]) for k, v in expected.items()
        }, name

        for issue_id, (events, users, first, last, title) in expected.items():
            one = app_client.get(f"/api/issues/{issue_id}", headers=auth, params={"range": name}).json()
            assert (one["events"], one["users"], one["title"]) == (events, users, title), name
            assert (_time(one["first_seen"]), _time(one["last_seen"])) == (first, last)
            page = app_client.get(f"{base}/{issue_id}", params={"range": name}).text
            assert html.unescape(re.search(r'<h1 class="issue-title">([^<]*)</h1>', page).group(1)) == title
            shown = re.search(
                r'id="window-figures".*?<strong>(\d+)</strong>.*?<strong>(\d+)</strong>', page, re.S
            )
            assert (int(shown.group(1)), int(shown.group(2))) == (events, users), (name, issue_id)
            assert (
                f"first seen {first:%Y-%m-%d %H:%M:%S} UTC" in page
                and f"last seen {last:%Y-%m-%d %H:%M:%S} UTC" in page
            )
            figure = json.loads(
                html.unescape(re.search(r'id="figure-json">(.*?)</script>', page, re.S).group(1))
            )
            assert sum(sum(trace.get("y") or []) for trace in figure["data"]) == events, (name, issue_id)
            body = {
                "dataset": "errors",
                "project": org["project"],
                "since": one["since"],
                "until": one["until"],
                "filters": [{"field": "issue_id", "op": "=", "value": str(issue_id)}],
                "group_by": [],
                "aggregates": [{"fn": "count"}, {"fn": "unique_users"}],
            }
            explored = app_client.post("/api/explore/query", json=body, headers=auth).json()
            assert [(r["count"], r["unique_users"]) for r in explored["rows"]] == [(events, users)], (
                name,
                issue_id,
            )
