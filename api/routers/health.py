"""`GET /api/health` (liveness: the process answers; component detail with a valid API key) and
`GET /api/health/ready` (readiness: whether a load balancer should send this server traffic, and why not).

Without a key the answers carry no detail about the installation: health says ``{"status": "ok"|"degraded"}``,
readiness names the failing checks only; a valid key adds the components, the queue and the reasons' words.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Literal

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from sqlalchemy import text

from api.deps import AppSettings, OptionalApiAuth
from api.routers.auth import ErrorBody
from stacklens.control.db import get_engine
from stacklens.ingest.front_door import front_door_status
from stacklens.readiness import Check, readiness
from stacklens.settings import Settings

router = APIRouter(prefix="/api", tags=["health"])


class Component(BaseModel):
    status: Literal["ok", "down"]
    latency_ms: float | None = None
    detail: str = ""


class FrontDoorQueue(BaseModel):
    """The front door's queue (stacklens/ingest/front_door/): requests waiting for their look-ups, rows
    spooled and not yet in the warehouse, and how fast it drains."""

    requests_waiting: int = Field(description="Requests waiting for their duplicate look-ups and the spool.")
    rows_waiting: int = Field(description="Rows answered or waiting, not yet in the warehouse.")
    rows_spooled: int = Field(description="Of those, rows answered 200 (in the spool), waiting for a drain.")
    oldest_waiting_ms: float = Field(description="Age of the oldest row not yet in the warehouse.")
    flushes_per_second: float = Field(description="Drains into the warehouse per second (last 10 s).")
    rows_per_flush: float = Field(description="Rows per drain (last 10 s).")
    requests_per_accept: float = Field(description="Requests answered together per spool write (last 10 s).")
    last_flush_ms: float = Field(description="Duration of the last drain.")
    accept_ms: float = Field(
        description="Duration of a spool write with its look-ups, on average (last 10 s)."
    )
    queued_ms: float = Field(
        description="How long a request waited for its spool write to begin, on average (last 10 s)."
    )
    drain_error: str = Field(description="Why the last drain failed ('' when it did not); it is retried.")
    keys_indexed: bool = Field(
        description="Whether the keys of stored rows are known in memory, so only keys that may be stored are "
        "looked up in the warehouse (a server that owns its embedded warehouse, once started; never with a "
        "ClickHouse server, where every key is looked up)."
    )
    keys_in_index: int = Field(description="Keys (event ids, batch ids) known in memory; 0 when not indexed.")


class HealthResponse(BaseModel):
    status: Literal["ok", "degraded"]
    components: dict[str, Component] | None = Field(
        default=None, description="Present with a valid API key: `warehouse` and `control_store`."
    )
    front_door: FrontDoorQueue | None = Field(
        default=None, description="Present with a valid API key, once the process has taken a request."
    )


class InstallationResponse(BaseModel):
    status: Literal["ok"]
    data_dir: str = Field(
        description="The data directory this server serves, so a command run from another directory on this "
        "machine can name it (stacklens/installation.py)."
    )


LOOPBACK = frozenset({"127.0.0.1", "::1"})
FORWARDING_HEADERS = ("x-forwarded-for", "forwarded", "x-real-ip")


def _local_caller(request: Request) -> bool:
    """A caller on this machine that reached the server directly: a proxy on the same host forwards its
    clients' requests from loopback too, but names them in a forwarding header."""
    host = request.client.host if request.client else ""
    return host in LOOPBACK and not any(name in request.headers for name in FORWARDING_HEADERS)


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
    from stacklens.warehouse.probe import ping

    return _timed(lambda: ping(settings))


@router.get(
    "/health",
    response_model=HealthResponse,
    response_model_exclude_none=True,
    responses={
        503: {"model": HealthResponse, "description": "A component is down."},
        401: {"model": ErrorBody},
    },
)
def health(
    request: Request, response: Response, settings: AppSettings, identity: OptionalApiAuth
) -> HealthResponse:
    """Overall status (no key needed); with a valid key, the status of each component."""
    components = {"warehouse": check_warehouse(settings), "control_store": check_control_store(settings)}
    healthy = all(c.status == "ok" for c in components.values())
    if not healthy:
        response.status_code = 503
    queue = front_door_status() if identity is not None else None
    return HealthResponse(
        status="ok" if healthy else "degraded",
        components=components if identity is not None else None,
        front_door=FrontDoorQueue(**queue) if queue is not None else None,
    )


@router.get(
    "/health/installation",
    response_model=InstallationResponse,
    responses={
        404: {
            "model": ErrorBody,
            "description": "The caller is not on this machine, or came through a proxy.",
        }
    },
)
def installation(request: Request, settings: AppSettings) -> InstallationResponse | JSONResponse:
    """Which data directory this server serves — answered only to a caller on this machine that reached the
    server directly (the `stacklens` commands ask it before they touch an installation); anyone else gets 404,
    so the server's paths are never told to the network."""
    if not _local_caller(request):
        return JSONResponse({"error": "Not Found", "detail": "no such route"}, status_code=404)
    return InstallationResponse(status="ok", data_dir=str(settings.data_dir))


class Reason(BaseModel):
    check: Check = Field(
        description="`disk`: the data directory's volume is below STACKLENS_DISK_FLOOR; `queue`: the front "
        "door's queue is full; `warehouse`: the warehouse does not answer; `migrations`: a store has "
        "migrations pending (`stacklens migrate`)."
    )
    detail: str | None = Field(default=None, description="In plain words, with a valid API key.")


class ReadyResponse(BaseModel):
    status: Literal["ready", "not_ready"]
    reasons: list[Reason] = Field(description="Why the server should not take traffic; empty when ready.")


@router.get(
    "/health/ready",
    response_model=ReadyResponse,
    response_model_exclude_none=True,
    responses={
        503: {"model": ReadyResponse, "description": "Not ready: the reasons say why (`Retry-After` set)."},
        401: {"model": ErrorBody},
    },
)
def ready(response: Response, settings: AppSettings, identity: OptionalApiAuth) -> ReadyResponse:
    """Readiness for load balancers: 200 when this server should take traffic; 503 with the reasons while
    ingest would be refused (disk below its floor, the front door's queue full), the warehouse does not
    answer, or migrations are pending. `GET /api/health` is the liveness answer."""
    reasons = readiness(settings)
    if reasons:
        response.status_code = 503
        response.headers["Retry-After"] = "10"
    return ReadyResponse(
        status="not_ready" if reasons else "ready",
        reasons=[Reason(check=r.check, detail=r.detail if identity is not None else None) for r in reasons],
    )
