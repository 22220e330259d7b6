"""Download one event as JSON and CSV: the stored event, values escaped by the CSV writer, spreadsheet
formulas neutralised, other organizations' events not found."""

from __future__ import annotations

import csv
import io
import json

from stacklens.csv_cells import neutralise as spreadsheet_safe
from tests.dashboards.conftest import sign_in
from tests.dashboards.landing import land, sdk_event

FORMULA = '=HYPERLINK("http://evil.example","x")'


def _fail() -> None:
    raise ValueError('bad "quoted", value\nsecond line')


def test_json_and_csv_downloads(client, org_factory) -> None:
    org, other = org_factory("Mine"), org_factory("Other")
    payload = sdk_event(
        _fail,
        tags={"note": FORMULA, "sum": "+1+2", "tabbed": "\t=1"},
        extra={"comment": 'a,b "c"', "plain": "fine"},
    )
    row = land(org["org_id"], org["project_id"], [payload])[0]
    sign_in(client, org["email"])
    base = (
        f"/orgs/{org['org_slug']}/projects/{org['project']}/issues/{row['issue_id']}/events/{row['event_id']}"
    )

    as_json = client.get(base + ".json")
    assert as_json.status_code == 200 and as_json.headers["content-type"].startswith("application/json")
    assert f'filename="event-{row["event_id"]}.json"' in as_json.headers["content-disposition"]
    document = json.loads(as_json.text)
    assert document["event_id"] == row["event_id"] and document["issue_id"] == row["issue_id"]
    assert document["payload"]["tags"]["note"] == FORMULA  # JSON keeps values exactly
    assert document["payload"]["exception"]["values"][0]["value"] == 'bad "quoted", value\nsecond line'

    as_csv = client.get(base + ".csv")
    assert as_csv.status_code == 200 and as_csv.headers["content-type"].startswith("text/csv")
    cells = dict(csv.reader(io.StringIO(as_csv.text)))
    assert cells["event_id"] == row["event_id"]
    # Commas, quotes and line breaks survive a round trip through a CSV reader.
    assert cells["payload.exception.values[0].value"] == 'bad "quoted", value\nsecond line'
    assert cells["payload.extra.comment"] == 'a,b "c"' and cells["payload.extra.plain"] == "fine"
    # Would-be formulas are prefixed so spreadsheets show them as text.
    assert cells["payload.tags.note"] == "'" + FORMULA
    assert cells["payload.tags.sum"] == "'+1+2"
    assert cells["payload.tags.tabbed"] == "'\t=1"
    assert all(not value.startswith(("=", "+", "@")) for value in cells.values())

    assert client.get(base + ".xml").status_code == 404
    assert client.get(base.rsplit("/", 1)[0] + "/not-an-id.json").status_code == 404
    # The other organization's event id under my issue, and my event under their project: not found.
    theirs = land(other["org_id"], other["project_id"], [sdk_event(_fail)])[0]
    assert client.get(base.rsplit("/", 1)[0] + f"/{theirs['event_id']}.json").status_code == 404
    their_path = f"/orgs/{other['org_slug']}/projects/{other['project']}/issues/{theirs['issue_id']}"
    assert client.get(f"{their_path}/events/{theirs['event_id']}.csv").status_code == 404
    client.cookies.clear()
    assert client.get(base + ".json", follow_redirects=False).status_code == 303  # sign-in first


def test_spreadsheet_safe() -> None:
    for risky in ("=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx"):
        assert spreadsheet_safe(risky) == "'" + risky
    for fine in ("", "text", "1", "a=b"):
        assert spreadsheet_safe(fine) == fine
