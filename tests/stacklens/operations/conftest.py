"""The operations tests use the dashboards' fixtures: migrated stores, organizations, a test client."""

from tests.dashboards.conftest import client, org_factory, stores  # noqa: F401 - shared fixtures
