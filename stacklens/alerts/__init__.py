"""Alerting: rules and their evaluation, the notification outbox, and the channels that deliver."""
