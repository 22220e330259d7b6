"""An attachment's download headers: always a download, never sniffed or run, whatever its name."""

from __future__ import annotations

from datetime import UTC, datetime

from stacklens.feedback.attachment_files import AttachmentRow
from stacklens.feedback.downloads import download_headers


def test_always_a_download_with_a_safe_name() -> None:
    row = AttachmentRow(
        "a" * 32, 1, "e" * 32, 'evil";.html', "text/html", "event.attachment", 3, datetime.now(UTC)
    )
    headers = download_headers(row)
    assert headers["Content-Disposition"].startswith('attachment; filename="evil__.html"')
    assert "filename*=UTF-8''evil%22%3B.html" in headers["Content-Disposition"]
    assert headers["X-Content-Type-Options"] == "nosniff" and "sandbox" in headers["Content-Security-Policy"]
