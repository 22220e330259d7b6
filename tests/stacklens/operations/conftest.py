"""The operations tests use the dashboards' fixtures: migrated stores, organizations, a test client."""
