"""The organization page shows the rate limits, this hour's use, and the `Rate Limited` answers its keys got
(the spec: numeric rate limits are viewed in the dashboard)."""

from __future__ import annotations

from stacklens.control import accounts
from stacklens.control.db import session_scope
from tests.dashboards.conftest import sign_in


def test_a_refused_request_shows_on_the_organization_page(client, org_factory, stores) -> None:
    org = org_factory()
    with session_scope(stores) as session:
        accounts.set_quota(session, org["org_id"], events_per_minute=900, requests_per_second=2)
    bearer = {"Authorization": f"Bearer {org['api_key']}"}
    answers = [client.get("/api/auth/verify", headers=bearer).status_code for _ in range(6)]
    assert 429 in answers, answers
    sign_in(client, org["email"])
    page = client.get(f"/orgs/{org['org_slug']}")
    assert page.status_code == 200
    assert 'id="limit-events">900<' in page.text and 'id="limit-requests">2<' in page.text
    assert 'class="refusal"' in page.text and "requests per second" in page.text
    assert f'--org "{org["org_slug"]}"' in page.text or "stacklens admin set-quota" in page.text
