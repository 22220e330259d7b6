"""Who is looking at which organization and project: resolved once per page, 404 for anything not theirs.

A user who is not a member of an organization gets the same 404 as for an organization that does not exist,
so URLs leak nothing about other tenants. Every warehouse query downstream takes ``org_id`` and
``project_id`` from here, never from the URL directly.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Annotated

from clickhouse_connect.driver.client import Client
from fastapi import Depends, HTTPException, Request
from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.control import roles
from stacklens.control.accounts import membership, user_memberships
from stacklens.control.models import Organization, Project, User
from stacklens.control.signin_sessions import Lifetimes, resolve_session
from stacklens.ingest.front_door import settle_spooled
from stacklens.settings import Settings
from stacklens.sso.sessions import check_session as check_sso_session
from stacklens.warehouse.client import get_warehouse


class SignInRequired(Exception):
    """No signed-in user: pages answer with a redirect to the sign-in form."""


class OwnerRequired(Exception):
    """Someone not an owner tried an owner-only action (the organization's API key, single sign-on)."""


class AdminRequired(Exception):
    """A member or viewer tried what owners and admins do (projects, teams, alerts, members, settings)."""


class ReadOnlyRole(Exception):
    """A viewer tried to change something (every page write but the few of :data:`VIEWER_WRITES`)."""


# The organization's pages a viewer may still send a form to: their own notification preference on an issue
# (watching it). Everything else a viewer sends to an organization is refused before its handler runs
# (org_viewer), so a route added later is read-only for viewers unless it is named here. Signing out, the
# person's account, password and notification settings live outside any organization (no role applies).
VIEWER_WRITES = frozenset({"/orgs/{org_slug}/projects/{project_slug}/issues/{issue_id}/watch"})
READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def app_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def warehouse_of(request: Request) -> Client:
    """The warehouse of this app's settings (opened on first use, then shared), with every event this server
    answered before the request landed in it (the front door's spool drained: a page reads its own writes)."""
    settings = app_settings(request)
    settle_spooled(settings)
    return get_warehouse(settings)


def session_lifetimes(settings: Settings) -> Lifetimes:
    return Lifetimes(
        idle=timedelta(minutes=settings.session_idle_minutes),
        absolute=timedelta(days=settings.session_max_days),
    )


def db_session(request: Request) -> Iterator[Session]:
    """One control-store session per request, committed when the handler returns normally, before the answer
    is sent (``Db`` asks for that): a browser following a redirect at once must find what the request
    wrote."""
    from stacklens.control.db import session_scope

    with session_scope(app_settings(request)) as session:
        yield session


# scope="function": FastAPI ends a yield dependency after the answer is sent unless told otherwise, so a
# sign-in's session row could be committed after the browser already asked for the page it was sent to.
Db = Annotated[Session, Depends(db_session, scope="function")]


@dataclass(frozen=True)
class Viewer:
    user: User
    org: Organization
    role: str

    @property
    def is_owner(self) -> bool:
        return self.role == "owner"

    @property
    def is_admin(self) -> bool:
        """An owner or an admin: manages projects, teams, alerts, members and settings."""
        return roles.manages(self.role)

    @property
    def can_write(self) -> bool:
        """Anyone but a viewer: pages show their forms only to those who may send them."""
        return roles.writes(self.role)

    @property
    def grantable_roles(self) -> tuple[str, ...]:
        return roles.grantable(self.role)

    def require_owner(self) -> None:
        if not self.is_owner:
            raise OwnerRequired()

    def require_admin(self) -> None:
        if not self.is_admin:
            raise AdminRequired()


@dataclass(frozen=True)
class ProjectView:
    viewer: Viewer
    project: Project
    settings: Settings

    @property
    def warehouse(self) -> Client:
        """The app's warehouse; resolved only by pages that read it (the key pages never open it). Every event
        this server answered before the read is in it (see warehouse_of)."""
        settle_spooled(self.settings)
        return get_warehouse(self.settings)

    @property
    def org_id(self) -> int:
        return self.viewer.org.id

    @property
    def project_id(self) -> int:
        return self.project.id


def current_user(request: Request, db: Db) -> User:
    """The user of the request's server-side session; a revoked, idle or expired one signs the browser out."""
    token = request.scope.get("session", {}).get("sid")
    if not token:
        raise SignInRequired()
    settings = app_settings(request)
    user = resolve_session(db, token, session_lifetimes(settings))
    if user is None:
        request.scope["session"].clear()
        raise SignInRequired()
    sso = check_sso_session(db, settings, token)
    if not sso.valid:
        # Ended by single sign-on (maximum age, a refused refresh): the revocation and its audit entry are
        # committed before the sign-in page is answered (the request's own transaction rolls back).
        db.commit()
        request.scope["session"].clear()
        raise SignInRequired()
    request.state.sso_org_id = sso.org_id
    return user


CurrentUser = Annotated[User, Depends(current_user)]


def org_viewer(request: Request, org_slug: str, user: CurrentUser, db: Db) -> Viewer:
    row = membership(db, user.id, org_slug)
    if row is None:
        raise HTTPException(status_code=404, detail="Not Found")
    sso_org_id = getattr(request.state, "sso_org_id", None)
    if sso_org_id is not None and row[0].id != sso_org_id:
        # A session opened by one organization's single sign-on opens that organization only: its provider
        # vouches for nobody elsewhere.
        raise HTTPException(
            status_code=403,
            detail=f"You signed in through another organization's single sign-on. Sign out, then sign in "
            f"to {row[0].name}.",
        )
    if row[1] == "viewer" and request.method not in READ_METHODS:
        # One gate for every write of every organization page, before the handler (and its form) runs.
        route = request.scope.get("route")
        if getattr(route, "path", None) not in VIEWER_WRITES:
            raise ReadOnlyRole()
    return Viewer(user=user, org=row[0], role=row[1])


OrgViewer = Annotated[Viewer, Depends(org_viewer)]


def project_view(request: Request, project_slug: str, viewer: OrgViewer, db: Db) -> ProjectView:
    project = db.execute(
        select(Project).where(Project.slug == project_slug, Project.org_id == viewer.org.id)
    ).scalar_one_or_none()
    if project is None:
        raise HTTPException(status_code=404, detail="Not Found")
    return ProjectView(viewer=viewer, project=project, settings=app_settings(request))


CurrentProject = Annotated[ProjectView, Depends(project_view)]


def user_orgs(db: Session, user_id: int) -> list[tuple[Organization, str]]:
    """The organizations a user belongs to, with the role, by name (the query lives in the accounts)."""
    return user_memberships(db, user_id)


def org_projects(db: Session, org_id: int) -> list[Project]:
    return list(db.execute(select(Project).where(Project.org_id == org_id).order_by(Project.name)).scalars())
