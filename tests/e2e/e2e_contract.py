"""What the end-to-end application produces, shared by ``e2e_app`` (run as a script) and the test.

Kept apart from ``e2e_app`` so the test imports the contract without the application's own imports, which
resolve only when it runs as ``python -m e2e_app`` with this folder on ``PYTHONPATH``.
"""

from __future__ import annotations

# error site -> events it produces; one issue each.
SITES: dict[str, int] = {
    "charge_card": 6,  # PaymentDeclined, reached from two callers
    "parse_quantity": 5,  # ValueError, varied inputs
    "lookup_sku": 4,  # KeyError
    "checkout_view": 3,  # unhandled in a WSGI request: request data with a secret header and extra data
    "browser_cart": 2,  # TypeError from @sentry/browser through the tunnel
    "sync_lag": 3,  # capture_message with a varying number
}
SECRET_TOKEN = "Bearer e2e-super-secret-token"
SECRET_PASSWORD = "hunter2-e2e-password"
