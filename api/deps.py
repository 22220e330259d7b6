"""Request dependencies: the control-store session, API-key authentication (with limits and usage), the
project a route's ``{slug}`` names, and the local operator's door.

``ApiAuth`` is what every authenticated route declares. It answers 401 ``Invalid API Key`` for a missing,
unknown, regenerated or whitespace-carrying key and for an app key; spends one request of the key's
per-second budget (429 ``Rate Limited``); and counts the use in the key's hourly usage row.

``OrgProject`` is the project of the path's ``{slug}`` in the key's organization (404 otherwise);
``LocalOperator`` opens the operator-only routes to a local request holding the running server's token."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from typing import Annotated

from clickhouse_connect.driver.client import Client
from fastapi import Depends, Request
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from api.errors import INVALID_API_KEY, ApiError
from api.token_buckets import RateLimiter, get_rate_limiter
from stacklens.blocking import WouldBlock, loop_only
from stacklens.control.auth import ApiKeyIdentity, has_whitespace
from stacklens.control.db import session_scope
from stacklens.control.errors import AccountNotFound
from stacklens.control.keys.api_identities import current_api_key
from stacklens.control.keys.use_tally import count_key_use
from stacklens.control.models import Project
from stacklens.control.projects import project_by_slug
from stacklens.control.rate_limits import REQUESTS, record_refusal
from stacklens.ingest.front_door import settle_spooled
from stacklens.server_link import TOKEN_HEADER, token_matches
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from stacklens_contract.keys import is_app_key

USER_AGENT_MAX = 300


# The dependencies that only read the app's state are coroutines: FastAPI runs a plain `def` dependency in its
# thread pool, and two thread hops per request were a tenth of an SDK's one-event request.
async def get_app_settings(request: Request) -> Settings:
    return app_settings(request)


def app_settings(request: Request) -> Settings:
    """The settings of the app serving ``request`` (for a route that declares no dependencies)."""
    settings: Settings = request.app.state.settings
    return settings


AppSettings = Annotated[Settings, Depends(get_app_settings)]


def get_db(settings: AppSettings) -> Iterator[Session]:
    """A control-store session for the request: committed when the route succeeds, rolled back otherwise,
    before the answer is sent (``DbSession`` asks for that), so a client reads back what it was told is
    saved."""
    with session_scope(settings) as session:
        yield session


# scope="function": FastAPI ends a yield dependency after the answer is sent unless told otherwise.
DbSession = Annotated[Session, Depends(get_db, scope="function")]


def get_warehouse_client(settings: AppSettings) -> Client:
    """The warehouse of this app's settings (shared per URL and database; opened on first use), with every
    event this server answered before the request landed in it: the front door's spool is drained first, so
    an API read sees its own writes (stacklens/ingest/front_door/doors.py)."""
    settle_spooled(settings)
    return get_warehouse(settings)


Warehouse = Annotated[Client, Depends(get_warehouse_client)]


async def get_limiter(settings: AppSettings) -> RateLimiter:
    return get_rate_limiter(settings)


Limiter = Annotated[RateLimiter, Depends(get_limiter)]


def _invalid(detail: str) -> ApiError:
    return ApiError(401, INVALID_API_KEY, detail, {"WWW-Authenticate": "Bearer"})


def bearer_token(request: Request) -> str:
    """The raw token of ``Authorization: Bearer <token>``; 401 when the header is missing or not Bearer."""
    header = request.headers.get("authorization")
    if header is None:
        raise _invalid("send the organization's API key as `Authorization: Bearer stacklens_api_…`")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token:
        raise _invalid("the Authorization header must be `Bearer <API key>`")
    return token


def client_ip(request: Request) -> str:
    return request.client.host if request.client else ""


async def require_api_key(request: Request) -> ApiKeyIdentity:
    """Authenticate the request's API key, enforce its request rate and record the use.

    One dependency with none of its own: the settings and the limiter are read from the app here, as the SDK
    routes do (solved as nested dependencies of every API route, they took a tenth of a one-line
    `/api/ingest` batch's time on the event loop). A coroutine: the steps run on the event loop inside
    :func:`~stacklens.blocking.loop_only`, and again in the thread pool when one would block (the key read
    from a control store that changed, Redis buckets, a 429 written to the activity log). When the key's
    answer is remembered at the store's current version and the limits live in this process's memory (the
    embedded install), nothing waits, and the thread hop a plain dependency takes was a seventh of a one-line
    `/api/ingest` batch's server CPU."""
    token = bearer_token(request)
    if has_whitespace(token):
        raise _invalid("the API key contains whitespace; remove spaces and line breaks around it")
    if is_app_key(token):
        raise _invalid("this is an app key, which identifies a project; authenticate with the API key")
    settings = app_settings(request)
    limiter = get_rate_limiter(settings)
    try:
        with loop_only():
            return _authenticate(request, settings, limiter, token)
    except WouldBlock:
        # Nothing took effect: a request's budget is spent by the limiter's first call, which is where
        # Redis marks itself, and a refused request spends none.
        return await run_in_threadpool(_authenticate, request, settings, limiter, token)


def _authenticate(request: Request, settings: Settings, limiter: RateLimiter, token: str) -> ApiKeyIdentity:
    """401 for an unknown key; else one request of the key's per-second budget spent (429, noted in the
    activity log, when none is left) and the use counted."""
    identity = current_api_key(settings, token)  # read again whenever the control store changed
    if identity is None:
        raise _invalid("the API key is unknown or has been regenerated")
    try:
        limiter.check_request(identity.api_key_id, identity.requests_per_second)
    except ApiError as refused:
        _note_request_refusal(settings, identity, refused)
        raise
    count_key_use(
        settings,
        identity.org_id,
        "api",
        identity.api_key_id,
        ip=client_ip(request),
        user_agent=request.headers.get("user-agent", "")[:USER_AGENT_MAX],
    )
    request.state.api_key = identity
    return identity


def _note_request_refusal(settings: Settings, identity: ApiKeyIdentity, refused: ApiError) -> None:
    note_refusal(
        settings, identity.org_id, REQUESTS, identity.requests_per_second, refused, identity.api_key_id
    )


ApiAuth = Annotated[ApiKeyIdentity, Depends(require_api_key)]


async def optional_api_key(request: Request) -> ApiKeyIdentity | None:
    """The identity when a valid key is sent, ``None`` when no Authorization header is present."""
    if request.headers.get("authorization") is None:
        return None
    return await require_api_key(request)


OptionalApiAuth = Annotated[ApiKeyIdentity | None, Depends(optional_api_key)]


def note_refusal(
    settings: Settings, org_id: int, limit: str, value: int, refused: ApiError, key_id: int | None = None
) -> None:
    """Record a 429 in the organization's activity (one entry per limit and minute), for the dashboard."""
    if refused.status != 429:
        return
    retry_after = float(refused.headers.get("Retry-After", "1"))
    with session_scope(settings) as session:
        record_refusal(session, org_id, limit, value, retry_after, key_id)


class ProjectOfSlug:
    """Dependency: the project the route's ``{slug}`` path parameter names in the caller's organization.

    A slug that is unknown or of another organization answers the same 404 ``Not Found``, so a key cannot
    probe other organizations' slugs. Its detail is the lookup's own (``no project with slug 'x' in this
    organization``) unless ``missing`` is given: a format string over ``slug``, for the routers whose
    published detail has other words. A slug from the query string or a body goes to ``project_by_slug``."""

    def __init__(self, missing: str | None = None) -> None:
        self.missing = missing

    def __call__(self, slug: str, identity: ApiAuth, session: DbSession) -> Project:
        try:
            return project_by_slug(session, slug, org_id=identity.org_id)
        except AccountNotFound as exc:
            if self.missing is None:
                raise
            raise ApiError(404, "Not Found", self.missing.format(slug=slug)) from exc


OrgProject = Annotated[Project, Depends(ProjectOfSlug())]
# The read views (performance, release health, logs) have answered a missing project in these words from the
# start; clients may match them.
ViewedProject = Annotated[Project, Depends(ProjectOfSlug("no project {slug!r} in this organization"))]


def require_local_operator(request: Request, what: str) -> None:
    """The installation's operator only: a local request with the running server's token
    (``<data_dir>/pipelines_token``, mode 0600). Organization API keys never open this door; ``what`` names
    the door in the refusal."""
    expected = getattr(request.app.state, "pipelines_token", None)
    if not expected:
        raise ApiError(
            404, "Not Found", "this server has no operator token (start it with `stacklens serve`)"
        )
    host = request.client.host if request.client else ""
    try:
        local = ipaddress.ip_address(host).is_loopback
    except ValueError:
        local = host in ("testclient", "localhost")
    if not local:
        raise ApiError(403, "Forbidden", f"{what} answers local requests only")
    if not token_matches(expected, request.headers.get(TOKEN_HEADER)):
        raise ApiError(401, "Unauthorized", f"send the token of <data_dir>/pipelines_token as {TOKEN_HEADER}")


class LocalOperator:
    """Dependency (``dependencies=[Depends(LocalOperator("…"))]``): the route answers the local operator only,
    as ``require_local_operator`` decides; ``door`` names the route in the 403."""

    def __init__(self, door: str) -> None:
        self.door = door

    def __call__(self, request: Request) -> None:
        require_local_operator(request, self.door)
