"""The views by name: the API's /performance/<view> names, and a name that is none of them refused."""

from __future__ import annotations

import pytest

from stacklens.performance.view_data import VIEWS, build
from stacklens.view_filters import ViewFilters
from tests.stacklens.performance.perf_seed import NOW


def test_the_views_by_name() -> None:
    assert VIEWS[0] == "overview" and "recommendations" in VIEWS


def test_an_unknown_view_is_refused_naming_the_views() -> None:
    filters = ViewFilters.parse(now=NOW)
    with pytest.raises(ValueError, match="view must be one of overview, pages, resources,"):
        build("budgets", None, 1, 1, filters)  # refused before any read: no warehouse needed
