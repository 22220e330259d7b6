"""`/docs`: Swagger UI served from this server (no CDN, works offline) under the same strict CSP as the
pages: its script and stylesheet are files under ``api/static`` and the start-up code is ``docs.js``, not an
inline script. The assets are swagger-ui-dist 5 (OpenAPI 3.1, which FastAPI emits), see ``VERSION``.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI, HTTPException
from fastapi.responses import FileResponse, HTMLResponse

STATIC = Path(__file__).parent / "static"
ASSETS = {
    "swagger-ui-bundle.js": (STATIC / "swagger-ui" / "swagger-ui-bundle.js", "text/javascript"),
    "swagger-ui.css": (STATIC / "swagger-ui" / "swagger-ui.css", "text/css"),
    "docs.js": (STATIC / "docs.js", "text/javascript"),
}
PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title} API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<link rel="icon" href="/favicon.ico">
</head>
<body>
<div id="swagger-ui" data-openapi-url="{openapi_url}"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/docs.js"></script>
</body>
</html>
"""


def install_docs(app: FastAPI) -> None:
    """Add ``/docs`` and its assets (create the app with ``docs_url=None``)."""
    page = PAGE.format(title=app.title, openapi_url=app.openapi_url)

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        return HTMLResponse(page)

    @app.get("/docs/assets/{name}", include_in_schema=False)
    def docs_asset(name: str) -> FileResponse:
        asset = ASSETS.get(name)
        if asset is None:
            raise HTTPException(status_code=404, detail="Not Found")
        path, media_type = asset
        return FileResponse(path, media_type=media_type, headers={"Cache-Control": "public, max-age=86400"})
