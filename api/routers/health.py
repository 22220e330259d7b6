"""`GET /api/health`: overall status for load balancers; component detail with a valid API key.

Without a key the answer is only ``{"status": "ok"|"degraded"}``, so nothing about the installation leaks.
Either way the status code is 503 when a component is down, which is what load balancers act on.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Literal

from fastapi import APIRouter, Response
from pydantic import BaseModel, Field
from sqlalchemy import text

from api.deps import AppSettings, OptionalApiAuth
from api.routers.auth import ErrorBody
from stacklens.control.db import get_engine
from stacklens.settings import Settings

router = APIRouter(prefix="/api", tags=["health"])


class Component(BaseModel):
    status: Literal["ok", "down"]
    latency_ms: float | None = None
    detail: str = ""


class HealthResponse(BaseModel):
    status: Literal["ok", "degraded"]
    components: dict[str, Component] | None = Field(
        default=None, description="Present with a valid API key: `warehouse` and `control_store`."
    )


def _first_line(exc: BaseException) -> str:
    text_ = str(exc).strip()
    return (text_.splitlines()[0] if text_ else exc.__class__.__name__)[:300]


def _timed(check: Callable[[], object]) -> Component:
    started = time.perf_counter()
    try:
        check()
    except Exception as exc:  # noqa: BLE001 - any failure of a dependency is "down", with its message
        return Component(status="down", detail=_first_line(exc))
    return Component(status="ok", latency_ms=round((time.perf_counter() - started) * 1000, 2))


def check_control_store(settings: Settings) -> Component:
    def run() -> None:
        with get_engine(settings).connect() as connection:
            connection.execute(text("SELECT 1"))

    return _timed(run)


def check_warehouse(settings: Settings) -> Component:
    def run() -> None:
        from stacklens.warehouse.client import get_warehouse
        from stacklens.warehouse.queries import load_query

        get_warehouse(settings).command(load_query("health/ping"))

    return _timed(run)


@router.get(
    "/health",
    response_model=HealthResponse,
    response_model_exclude_none=True,
    responses={
        503: {"model": HealthResponse, "description": "A component is down."},
        401: {"model": ErrorBody},
    },
)
def health(response: Response, settings: AppSettings, identity: OptionalApiAuth) -> HealthResponse:
    """Overall status (no key needed); with a valid key, the status of each component."""
    components = {"warehouse": check_warehouse(settings), "control_store": check_control_store(settings)}
    healthy = all(c.status == "ok" for c in components.values())
    if not healthy:
        response.status_code = 503
    return HealthResponse(
        status="ok" if healthy else "degraded", components=components if identity is not None else None
    )
