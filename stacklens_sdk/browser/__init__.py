"""What the browser side of an application loads beside ``@sentry/browser``: ``inp_attribution.js``,
StackLens' INP attribution (docs/sdk.md, "Browser"; docs/performance.md, "INP causes").

Serve the file with the page's other scripts (or bundle it) and start it after ``Sentry.init``::

    <script src="/static/stacklens-inp.js"></script>
    <script>StackLensINP.start({ sentry: Sentry });</script>

``inp_attribution_js()`` gives its text (to write into a static folder or answer from a route)."""

from __future__ import annotations

from pathlib import Path

INP_ATTRIBUTION_JS = Path(__file__).with_name("inp_attribution.js")


def inp_attribution_js() -> str:
    """The text of ``inp_attribution.js``."""
    return INP_ATTRIBUTION_JS.read_text(encoding="utf-8")


__all__ = ["INP_ATTRIBUTION_JS", "inp_attribution_js"]
