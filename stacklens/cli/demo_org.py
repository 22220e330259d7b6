"""The demo organization, login and project, the same on every run (`stacklens demo-org`, `stacklens up`).

The first call creates them; later calls return the same values: the keys are read back from their
encrypted copies, and the password and the agent token (a read token for `/mcp`, docs/agents.md) are derived
from the server secret (so they are stable for this installation and known to no other).
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

from sqlalchemy import select, update

from stacklens.agents.tokens import PERSONAL_PREFIX, ensure_token
from stacklens.control import accounts
from stacklens.control.db import migrate_control_store, session_scope
from stacklens.control.errors import AccountError
from stacklens.control.keys.lifecycle import (
    regenerate_api_key,
    regenerate_app_key,
    reveal_api_key,
    reveal_app_key,
)
from stacklens.control.keys.values import KeyDecryptionError
from stacklens.control.models import Organization, Project, User
from stacklens.control.projects import create_project
from stacklens.settings import Settings

DEMO_ORGANIZATION = "Demo Organization"
DEMO_EMAIL = "demo@stacklens.local"
DEMO_PROJECT = "Demo Project"
DEMO_PLATFORM = "python"
DEMO_AGENT_TOKEN_NAME = "Demo agent (printed by stacklens up)"


@dataclass(frozen=True)
class DemoOrg:
    organization: str
    email: str
    password: str
    api_key: str
    project: str  # slug
    app_key: str
    agent_token: str = ""  # a read token for agents at /mcp (docs/agents.md)


def demo_password(settings: Settings) -> str:
    digest = hmac.new(settings.secret(), b"stacklens demo password", hashlib.sha256).hexdigest()
    return f"demo-{digest[:16]}"


def demo_agent_token(settings: Settings) -> str:
    """The demo's agent token (scope read): derived from the server secret like the password, so every start
    prints the same working token; only its digest is stored."""
    digest = hmac.new(settings.secret(), b"stacklens demo agent token", hashlib.sha256).hexdigest()
    return f"{PERSONAL_PREFIX}demo{digest[:40]}"


def ensure_demo_org(settings: Settings) -> DemoOrg:
    """Create the demo organization, user and project when missing (migrating the control store first);
    return their login and keys."""
    password = demo_password(settings)
    migrate_control_store(settings)
    with session_scope(settings) as session:
        org = session.scalar(select(Organization).where(Organization.name == DEMO_ORGANIZATION))
        if org is None:
            org, api_key = accounts.create_organization(session, DEMO_ORGANIZATION, DEMO_EMAIL, password)
        else:
            try:
                api_key = reveal_api_key(session, org.id, None)
            except (AccountError, KeyDecryptionError):
                # No readable current key (the secret changed): a new one is the only way to print a working
                # one.
                api_key = regenerate_api_key(session, org.id)
        user = session.scalar(select(User).where(User.email == DEMO_EMAIL))
        if user is None:
            accounts.add_member(session, org.id, DEMO_EMAIL, password, role="owner")
        elif not accounts.verify_password(user.password_hash, password):
            user.password_hash = accounts.hash_password(password)  # the demo login is always the printed one
        # The demo's one person runs the installation too: the operators' page (/admin/operations) is theirs.
        session.flush()
        session.execute(update(User).where(User.email == DEMO_EMAIL).values(is_operator=True))
        project = session.scalar(
            select(Project).where(Project.org_id == org.id, Project.name == DEMO_PROJECT)
        )
        if project is None:
            project, app_key = create_project(session, org.id, DEMO_PROJECT, DEMO_PLATFORM)
        else:
            try:
                app_key = reveal_app_key(session, project.id, None)
            except (AccountError, KeyDecryptionError):
                app_key = regenerate_app_key(session, project.id, None)
        owner = session.scalars(select(User.id).where(User.email == DEMO_EMAIL)).one()
        agent_token = demo_agent_token(settings)
        ensure_token(session, org.id, owner, agent_token, DEMO_AGENT_TOKEN_NAME, ["read"])
        return DemoOrg(DEMO_ORGANIZATION, DEMO_EMAIL, password, api_key, project.slug, app_key, agent_token)
