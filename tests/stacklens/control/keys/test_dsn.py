"""DSNs: the app key as the public key of the service's address, masked as the key column masks it."""

from __future__ import annotations

from stacklens.control.db import session_scope
from stacklens.control.keys.dsn import dsn_for, masked_dsn, primary_masked_dsn, project_dsns
from stacklens.control.keys.lifecycle import list_app_keys
from stacklens.public_url import public_base_url
from stacklens.settings import Settings

KEY = "stacklens_app_" + "a" * 24


def test_a_dsn_carries_the_key_the_host_and_the_project() -> None:
    assert dsn_for(KEY, "https://errors.example.com/", 7) == f"https://{KEY}@errors.example.com/7"
    assert dsn_for(KEY, "http://10.0.0.2:8000/stacklens", 7) == f"http://{KEY}@10.0.0.2:8000/stacklens/7"
    # A service name with "-" (allowed before DSNs existed) cannot be a DSN's public key.
    assert dsn_for("stacklens_app_check-out_" + "a" * 24, "https://e.example", 7) is None


def test_the_masked_dsn_shows_the_masked_key_only() -> None:
    assert masked_dsn(f"https://{KEY}@errors.example.com/7", "stacklens_app_…aaaa") == (
        "https://stacklens_app_…aaaa@errors.example.com/7"
    )
    assert masked_dsn(None, "x") is None


def test_the_projects_dsns_from_its_stored_keys(settings: Settings, make_org) -> None:
    org = make_org()
    with session_scope(settings) as session:
        dsns = project_dsns(session, int(org["project_id"]), settings)
        assert list(dsns.values()) == [
            dsn_for(str(org["app_key"]), public_base_url(settings), int(org["project_id"]))
        ]
        primary = next(k for k in list_app_keys(session, int(org["project_id"])) if k.service is None)
        shown = primary_masked_dsn(session, int(org["project_id"]), settings)
        assert shown is not None and primary.masked in shown and str(org["app_key"]) not in shown
