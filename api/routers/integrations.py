"""Issue-tracker connections and external links (docs/reference.md): `GET/POST /api/integrations`,
`DELETE /api/integrations/{id}`, `GET/POST /api/issues/{id}/external-links`.

A connection is tested against the tracker before it is stored; its token is never returned (only its last
four characters). Creating a link twice returns the same link (200 instead of 201) and never a second
ticket. A tracker's refusal answers 400 with its words; a tracker that does not answer, 503.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Response
from sqlalchemy import select
from typing_extensions import TypedDict  # typing's own is not a response model before Python 3.12

from api.deps import ApiAuth, AppSettings, DbSession, Warehouse
from api.errors import ApiError
from api.routers.auth import AUTH_ERRORS, ErrorBody
from api.routers.issues_api import issue_of
from stacklens.control import integrations
from stacklens.control.models import Organization
from stacklens.integrations import links
from stacklens.integrations.prefill import Draft, draft_for
from stacklens.public_url import absolute_link

router = APIRouter(prefix="/api", tags=["integrations"])
ERRORS = {
    **AUTH_ERRORS,
    400: {
        "model": ErrorBody,
        "description": "A field is invalid, or the tracker refused; the detail says which.",
    },
    404: {"model": ErrorBody, "description": "No such integration or issue in this organization."},
    409: {"model": ErrorBody, "description": "The same ticket is being created by another request."},
    503: {"model": ErrorBody, "description": "The tracker did not answer; retrying later is safe."},
}
INTEGRATION_EXAMPLE = {
    "type": "github",
    "name": "Web repo",
    "base_url": "https://api.github.com",
    "token": "github_pat_…",
    "default_target": "acme/web",
}
IntegrationBody = Annotated[dict[str, Any], Body(examples=[INTEGRATION_EXAMPLE])]
LinkBody = Annotated[dict[str, Any], Body(examples=[{"integration_id": 1, "target": "acme/web"}])]


class ConnectionList(TypedDict):
    integrations: list[integrations.ConnectionOut]


class LinkList(TypedDict):
    links: list[links.LinkOut]


@router.get("/integrations", response_model=ConnectionList, responses=ERRORS)
def list_integrations(identity: ApiAuth, session: DbSession) -> ConnectionList:
    """The organization's tracker connections (tokens are never returned)."""
    rows = integrations.list_connections(session, identity.org_id)
    return {"integrations": [integrations.connection_out(r) for r in rows]}


@router.post("/integrations", status_code=201, response_model=integrations.ConnectionOut, responses=ERRORS)
def create_integration(
    body: IntegrationBody, identity: ApiAuth, session: DbSession, settings: AppSettings
) -> integrations.ConnectionOut:
    """Connect a tracker with a token. The token is tried first (`connected_as`, `targets`); a refused
    token is not stored. Jira Cloud takes `email` beside the API token; Jira Data Center a PAT alone."""
    row = integrations.create_connection(session, identity.org_id, settings, body)
    return integrations.connection_out(row)


@router.delete("/integrations/{integration_id}", status_code=204, responses=ERRORS)
def delete_integration(integration_id: int, identity: ApiAuth, session: DbSession) -> Response:
    """Remove a connection and its links (tickets stay in the tracker)."""
    integrations.delete_connection(session, identity.org_id, integration_id)
    return Response(status_code=204)


@router.get("/issues/{issue_id}/external-links", response_model=LinkList, responses=ERRORS)
def list_links(issue_id: str, identity: ApiAuth, session: DbSession, client: Warehouse) -> LinkList:
    project, _summary = issue_of(identity, session, client, issue_id)
    found = links.links_of_issues(session, identity.org_id, project.id, [int(issue_id)])
    return {"links": found.get(int(issue_id), [])}


@router.post(
    "/issues/{issue_id}/external-links", status_code=201, response_model=links.LinkOut, responses=ERRORS
)
def create_external_link(
    issue_id: str,
    body: LinkBody,
    response: Response,
    identity: ApiAuth,
    session: DbSession,
    client: Warehouse,
    settings: AppSettings,
) -> links.LinkOut:
    """Create the issue in a connected tracker (`{"integration_id", "target"}`; optional `title`, `notes`)
    or link an existing ticket (`{"integration_id", "reference": URL or key}`). The same call again returns
    the same link with 200."""
    if not isinstance(body, dict):
        raise ApiError(400, "Bad Request", "body: send a JSON object")
    project, summary = issue_of(identity, session, client, issue_id)
    org = session.scalar(select(Organization).where(Organization.id == identity.org_id))
    target = body.get("target") or ""
    if not isinstance(target, str):
        raise ApiError(
            400, "Bad Request", "target: must be text, like owner/repo, a project key or a team key"
        )
    actor = f"api:{identity.api_key_id}"
    session.commit()  # the link flow writes through its own transactions (step by step, see links.py)
    if body.get("reference") is not None:
        result = links.link_existing(
            settings,
            identity.org_id,
            project.id,
            int(issue_id),
            body.get("integration_id"),
            body["reference"],
            target,
            actor,
        )
    else:
        path = f"/orgs/{org.slug if org else ''}/projects/{project.slug}/issues/{issue_id}"
        link = absolute_link(settings, path)
        draft = draft_for(client, identity.org_id, project.id, int(issue_id), summary, link)
        for name in ("title", "notes"):
            if body.get(name) is not None and not isinstance(body.get(name), str):
                raise ApiError(400, "Bad Request", f"{name}: must be text")
        title = (body.get("title") or draft.title).strip()[:240]
        draft = Draft(title, body.get("notes") or "", draft.summary, draft.stack_top, draft.link)
        result = links.create_link(
            settings,
            identity.org_id,
            project.id,
            int(issue_id),
            body.get("integration_id"),
            target,
            draft,
            actor,
        )
    if not result.created:
        response.status_code = 200
    return result.link
