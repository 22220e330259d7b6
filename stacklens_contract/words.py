"""The spec's words, written once: error messages (word for word), the filtered marker, breadcrumb categories.

The service answers with these messages, the shipper recognises and logs them, the SDK's tunnel uses them;
the dashboards show the marker and filter by the categories.
"""

from __future__ import annotations

# Error messages of the spec's Errors table: the `error` field of the API's answers and the words the
# shipper logs.
INVALID_API_KEY = "Invalid API Key"
APPLICATION_NOT_FOUND = "Application Not Found"
RATE_LIMITED = "Rate Limited"
SERVICE_UNAVAILABLE = "Service Unavailable"
AUTHENTICATION_FAILED = "Authentication failed"

# What replaces a secret or a person's details, in the SDK, at ingest and on shared pages.
FILTERED = "[FILTERED]"

# The breadcrumb categories the SDK sorts integration breadcrumbs into and the event page filters by.
BREADCRUMB_CATEGORIES = ("navigation", "http", "ui", "console", "error")
