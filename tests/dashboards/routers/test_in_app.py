"""The project's in-app rules form: the owner saves module prefixes; a bad prefix changes nothing."""

from __future__ import annotations

from stacklens.control.db import session_scope
from stacklens.control.projects_settings import in_app_rules
from stacklens.ingest.in_app import InAppRules
from stacklens.settings import Settings
from tests.dashboards.conftest import csrf_of, sign_in


def test_the_owner_sets_the_rules_and_a_bad_prefix_is_refused(client, org_factory, stores: Settings) -> None:
    org = org_factory()
    sign_in(client, org["email"])
    settings_page = f"/orgs/{org['org_slug']}/projects/{org['project']}/settings"
    token = csrf_of(client.get(settings_page).text)
    saved = client.post(
        settings_page + "/in-app",
        data={"include": "shop\nshop.views, acme.lib.", "exclude": "vendor", "csrf_token": token},
        follow_redirects=False,
    )
    assert saved.status_code == 303 and saved.headers["location"] == settings_page + "#in-app"
    expected = InAppRules(("shop", "shop.views", "acme.lib"), ("vendor",))
    with session_scope(stores) as session:
        assert in_app_rules(session, org["project_id"]) == expected

    refused = client.post(
        settings_page + "/in-app", data={"include": "shop;drop", "csrf_token": token}, follow_redirects=False
    )
    assert refused.status_code == 400 and "is not a module prefix" in refused.text
    with session_scope(stores) as session:
        assert in_app_rules(session, org["project_id"]) == expected
