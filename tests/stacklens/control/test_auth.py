"""Keys to identities: a current API key names its organization, an app key its project, anything else
nobody."""

from __future__ import annotations

from stacklens.control.auth import find_dsn_caller, has_whitespace, resolve_app_key, verify_api_key
from stacklens.control.db import session_scope
from stacklens.settings import Settings


def test_api_keys(settings: Settings, make_org) -> None:
    org = make_org("Acme")
    api_key, app_key = str(org["api_key"]), str(org["app_key"])
    with session_scope(settings) as session:
        identity = verify_api_key(session, api_key)
        assert identity is not None and (identity.org_id, identity.org_name) == (org["org_id"], "Acme")
        for wrong in (api_key + " ", api_key[:-1] + ("A" if api_key[-1] != "A" else "B"), app_key, "", None):
            assert verify_api_key(session, wrong) is None


def test_app_keys_within_and_across_organizations(settings: Settings, make_org) -> None:
    acme, other = make_org("Acme"), make_org("Globex")
    app_key = str(acme["app_key"])
    with session_scope(settings) as session:
        mine = resolve_app_key(session, int(acme["org_id"]), app_key)
        assert mine is not None and mine.project_id == acme["project_id"] and mine.service is None
        # Another organization's key is no key at all (its existence does not leak).
        assert resolve_app_key(session, int(other["org_id"]), app_key) is None
        found = find_dsn_caller(session, app_key)
        assert found is not None and found.identity == mine
        assert find_dsn_caller(session, str(acme["api_key"])) is None
        assert resolve_app_key(session, int(acme["org_id"]), f"\t{app_key}") is None
    assert has_whitespace("a\u00a0b") and not has_whitespace("stacklens_app_x")
