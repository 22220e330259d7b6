"""Notification channels: e-mail (SMTP), Slack incoming webhooks and signed generic webhooks."""
