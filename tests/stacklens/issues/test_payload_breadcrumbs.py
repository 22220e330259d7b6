"""Breadcrumbs as a new user reads them (stacklens/issues/payload_breadcrumbs.py): one time format, in
words, categories that filter by prefix."""

from __future__ import annotations

from stacklens.issues import payload_breadcrumbs


def test_breadcrumbs_one_time_format_and_words() -> None:
    payload = {
        "breadcrumbs": [
            {
                "timestamp": "2026-11-22T10:00:01.250000Z",
                "category": "query",
                "message": "SELECT 1",
            },  # Python
            {"timestamp": 1795428000.5, "category": "navigation", "data": {"from": "/", "to": "/cart"}},  # JS
            {"timestamp": 1795428001.0, "category": "ui.click", "message": "button.add-to-cart"},
            {
                "timestamp": 1795428002.0,
                "category": "fetch",
                "data": {"method": "POST", "url": "/api/cart", "status_code": 500},
            },
            {"timestamp": 1795428003.0, "category": "custom", "data": {"sku": "LNS-1", "qty": 2}},
        ]
    }
    crumbs = payload_breadcrumbs.breadcrumbs(payload)
    times = [c["time"] for c in crumbs]
    assert times[0] == "2026-11-22 10:00:01.250"
    assert all(len(t) == len("2026-11-22 10:00:01.250") and t[10] == " " for t in times), times
    by_category = {c["category"]: c["message"] for c in crumbs}
    assert by_category["navigation"] == "/ → /cart"
    assert by_category["fetch"] == "POST /api/cart → 500"
    assert by_category["custom"] == "sku=LNS-1, qty=2"
    assert "{" not in "".join(by_category.values())
    categories = payload_breadcrumbs.breadcrumb_categories(crumbs)
    assert categories[:5] == ["navigation", "http", "ui", "console", "error"]
    assert "ui.click" not in categories and "query" in categories and "fetch" in categories
