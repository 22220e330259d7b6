"""The operations tests use the dashboards' fixtures: migrated stores, organizations, a test client."""

from tests.dashboards.conftest import client  # noqa: F401 - shared fixtures
