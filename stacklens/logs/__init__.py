"""Log records: OpenTelemetry and Sentry SDK logs searched by the logs view, its API and Explore."""
