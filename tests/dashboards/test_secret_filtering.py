"""An app key on the command line of the reporting process (sentry-sdk's ``sys.argv`` extra) shows nowhere:
issue page, event CSV and JSON downloads, and the public share link all carry ``[FILTERED]`` instead."""

from __future__ import annotations

import json
import re

from fastapi.testclient import TestClient

from stacklens.ingest.scrub import scrub_payload
from tests.dashboards.conftest import csrf_of, sign_in
from tests.dashboards.landing import land, sdk_event


def _fail() -> None:
    raise RuntimeError("shipper could not start")


def test_keys_in_sys_argv_never_show(client, org_factory) -> None:
    org = org_factory()
    payload = sdk_event(_fail, extra={"sys.argv": ["stacklens-shipper", "--app-key", org["app_key"]]})
    raw = json.dumps(payload).encode()
    row = land(org["org_id"], org["project_id"], [scrub_payload(payload, raw)])[0]
    sign_in(client, org["email"])
    issue = f"/orgs/{org['org_slug']}/projects/{org['project']}/issues/{row['issue_id']}"
    event = f"{issue}/events/{row['event_id']}"
    pages = [client.get(issue), client.get(event + ".csv"), client.get(event + ".json")]
    token = csrf_of(pages[0].text)
    shared = client.post(f"{issue}/share", data={"expires": "7", "scope": "issue", "csrf_token": token})
    link = re.search(r'id="share-url" value="[^"]*(/share/[^"]+)"', shared.text)
    assert link
    with TestClient(client.app) as stranger:
        pages.append(stranger.get(link.group(1)))
    assert [page.status_code for page in pages] == [200, 200, 200, 200]
    for page in pages:
        assert org["app_key"] not in page.text
    assert "--app-key" in pages[2].text and "[FILTERED]" in pages[2].text
