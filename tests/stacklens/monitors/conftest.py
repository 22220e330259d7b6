"""Fixtures of the monitors tests: the dashboards' migrated stores and organizations."""

from __future__ import annotations

from tests.dashboards.conftest import org_factory, stores  # noqa: F401 - shared fixtures
