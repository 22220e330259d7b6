"""The organization's settings (`/orgs/{org}/settings`): one page that leads to every section — API tokens
and members (owners), notification channels, issue-tracker integrations, the activity log — with what each
holds today, and each project's own settings.

Members see the page too: channels, integrations and the activity log are readable by every member (changes
stay owner-only on their pages); the page names the owners to ask for a key or an invitation.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from dashboards.context import Db, OrgViewer, org_projects
from dashboards.rendering import render
from dashboards.security import check_csrf
from stacklens.control import accounts, channels, integrations, invitations, share_publishers
from stacklens.control.keys import lifecycle as keys

router = APIRouter(include_in_schema=False)
SETTINGS = "/orgs/{org_slug}/settings"


@router.get(SETTINGS, response_class=HTMLResponse)
def organization_settings(request: Request, viewer: OrgViewer, db: Db) -> Response:
    org_id = viewer.org.id
    members = accounts.list_members(db, org_id)
    channel_rows = channels.list_channels(db, org_id)
    current = keys.current_api_key(db, org_id) if viewer.is_owner else None
    pending = keys.next_api_key(db, org_id) if viewer.is_owner else None
    context = {
        "viewer": viewer,
        "user": viewer.user,
        "api_key": current,
        "api_key_masked": f"stacklens_api_…{current.last4}" if current else None,
        "next_key": pending,
        "members": len(members),
        "owners": [member.email for member, role in members if role == "owner"],
        "invitations": len(invitations.pending_invitations(db, org_id)) if viewer.is_admin else 0,
        "channels": len(channel_rows),
        "paused": [row.name for row in channel_rows if channels.health(row).badge == "paused"],
        "connections": [
            (row.name, integrations.LABELS.get(row.type, row.type))
            for row in integrations.list_connections(db, org_id)
        ],
        "projects": org_projects(db, org_id),
        "share_links_by": (publishers := share_publishers.share_links_by(db, org_id)),
        "share_link_label": share_publishers.LABELS[publishers],
        "share_link_choices": list(share_publishers.LABELS.items()),
    }
    return render(request, "org_settings.html", context)


@router.post(SETTINGS + "/share-links")
async def share_link_publishers(request: Request, viewer: OrgViewer, db: Db) -> Response:
    """Owners and admins choose who may publish public share links (owners only, or every member)."""
    viewer.require_admin()
    form = await request.form()
    check_csrf(request, str(form.get("csrf_token") or ""))
    share_publishers.set_share_links_by(
        db, viewer.org.id, str(form.get("share_links_by") or ""), viewer.user.id
    )
    return RedirectResponse(
        SETTINGS.format(org_slug=viewer.org.slug) + "#settings-share-links", status_code=303
    )
