"""The release list (stacklens/releases/release_list.py): its sort orders and its filters."""

from __future__ import annotations

import pytest

from stacklens.releases.release_list import health_filters, sort_releases


def test_sorting_and_filters() -> None:
    filters = health_filters(range="7d", environment="production")
    assert filters.environment == "production" and filters.range == "7d"
    assert health_filters().range == "30d"
    with pytest.raises(ValueError, match="browser: release health is per release and environment"):
        health_filters(browser="Chrome")
    with pytest.raises(ValueError, match="sort: 'speed' is not one of first_seen"):
        sort_releases([], "speed")
