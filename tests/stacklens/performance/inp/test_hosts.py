"""A project's own script hosts: normalised (lower case, no duplicates), bad ones refused naming the
field, and kept per project of its organization only."""

from __future__ import annotations

import pytest

from stacklens.control.db import store_session
from stacklens.errors import InvalidInput
from stacklens.performance.inp.hosts import (
    all_first_party_hosts,
    first_party_hosts,
    normalise_hosts,
    set_first_party_hosts,
)


def test_hosts_are_normalised() -> None:
    assert normalise_hosts([" CDN.Shop.test ", "localhost:8001", "cdn.shop.test"]) == [
        "cdn.shop.test",
        "localhost:8001",
    ]
    assert normalise_hosts([]) == []


@pytest.mark.parametrize("bad", ["https://cdn.shop.test", "cdn shop", "", 7, "a" * 300, "x/y"])
def test_bad_hosts_are_refused_naming_the_field(bad) -> None:
    with pytest.raises(InvalidInput, match="hosts"):
        normalise_hosts([bad])
    with pytest.raises(InvalidInput, match="hosts"):
        normalise_hosts("cdn.shop.test")


def test_hosts_are_kept_per_project_of_its_organization(settings, make_org) -> None:
    org, other = make_org("Hosts A"), make_org("Hosts B")
    with store_session(settings.resolved_database_url) as session:
        assert set_first_party_hosts(session, org["org_id"], org["project_id"], ["cdn.shop.test"])
        assert not set_first_party_hosts(session, other["org_id"], org["project_id"], ["evil.test"])
    with store_session(settings.resolved_database_url) as session:
        assert first_party_hosts(session, org["org_id"], org["project_id"]) == ["cdn.shop.test"]
        assert first_party_hosts(session, other["org_id"], org["project_id"]) is None
        assert all_first_party_hosts(session)[org["project_id"]] == ["cdn.shop.test"]
