"""How an attachment is handed out (docs/feedback.md): always as a download, never rendered by the browser.

An attachment is whatever an SDK sent — an HTML file or an SVG would run script in StackLens's origin if it
were shown inline — so every answer is ``application/octet-stream`` with ``Content-Disposition:
attachment``, ``nosniff`` and a sandboxing CSP, whatever type the SDK named."""

from __future__ import annotations

from urllib.parse import quote

from stacklens.feedback.attachment_files import AttachmentRow


def download_headers(row: AttachmentRow) -> dict[str, str]:
    ascii_name = "".join(c if 32 <= ord(c) < 127 and c not in '"\\;' else "_" for c in row.filename)
    return {
        "Content-Disposition": f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(row.filename)}",
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": "default-src 'none'; sandbox",
        "Cache-Control": "private, no-store",
    }
