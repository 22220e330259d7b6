"""The dashboard page's variables bar, auto-refresh and TV mode (docs/explore.md, "Variables", "Auto-refresh
and TV mode"), read from the URL so a link keeps them: ``var-<name>=<value>`` per variable (else its
default), ``refresh=30s|1m|5m|15m|off`` (else the dashboard's own) and ``tv=1`` (full screen, no navigation,
no editing). The page's script (``static/dashboard.js``) reloads it at the chosen pace while the tab is
shown, never while it is hidden; a reload within a minute of the last is answered from the widgets' kept
answers (:mod:`stacklens.explore.widget_cache`), so a 30 s refresh costs the engine one question a minute
per widget at most, within the analysts' query budgets."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from fastapi import Request
from sqlalchemy.orm import Session

from dashboards.context import app_settings
from dashboards.dashboard_board import board_views
from stacklens.explore import dashboard_variables as dv
from stacklens.explore.dashboards import Board
from stacklens.explore.query import BadQuery


def board_page(
    request: Request, db: Session, org_id: int, org_slug: str, board: Board, filters: dict[str, str]
) -> dict[str, Any]:
    """The page's context for its widgets, variables, refresh and TV mode; a bad URL value is named in
    ``variable_error`` and the dashboard's own value used instead."""
    params = request.query_params
    variables = dv.variables_of(board.variables)
    errors = []
    try:
        chosen = dv.chosen_values(variables, params)
    except BadQuery as exc:
        errors.append(str(exc))
        chosen = {v.name: v.default for v in variables}
    refresh = board.refresh or ""
    if "refresh" in params:
        try:
            refresh = dv.parse_refresh(params["refresh"]) or ""
        except BadQuery as exc:
            errors.append(str(exc))
    tv = params.get("tv") == "1"
    now = datetime.now(UTC)
    settings = app_settings(request)
    views, choices = board_views(settings, db, org_id, org_slug, board, filters, chosen, now=now)
    extra = [(dv.PARAM + name, value) for name, value in chosen.items() if value]
    if "refresh" in params:
        extra.append(("refresh", refresh or "off"))
    return {
        "widgets": views,
        "variables": choices,
        "chosen": chosen,
        # What "Keep these filters" would change: a value other than the dashboard's own default or pace.
        "unsaved": chosen != {v.name: v.default for v in variables} or refresh != (board.refresh or ""),
        "refresh": refresh,
        "refresh_seconds": dv.REFRESHES.get(refresh, 0),
        "refreshes": list(dv.REFRESHES),
        "tv": tv,
        "variable_error": "; ".join(errors),
        "extra_query": urlencode(extra),
    }
