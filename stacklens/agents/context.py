"""What a tool reads through: the caller, the settings, a control-store session and the warehouse (its
queries counted for the audit), and the organization's projects — nothing of another organization is
reachable from here (every lookup is scoped by ``identity.org_id``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from clickhouse_connect.driver.client import Client
from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.agents.calls import Usage
from stacklens.agents.tokens import AgentIdentity
from stacklens.control.models import Project
from stacklens.errors import Forbidden, NotFound
from stacklens.issues.reads import IssueSummary, issue_summary
from stacklens.settings import Settings


class WriteRefused(Forbidden):
    """A write tool called with a read-only token, or by a viewer."""


@dataclass
class ToolContext:
    identity: AgentIdentity
    settings: Settings
    session: Session
    warehouse: Client
    usage: Usage

    @property
    def org_id(self) -> int:
        return self.identity.org_id

    def projects(self) -> list[Project]:
        return list(
            self.session.scalars(select(Project).where(Project.org_id == self.org_id).order_by(Project.id))
        )

    def project(self, slug: str) -> Project:
        """The organization's project ``slug``; another organization's is as unknown as a missing one."""
        found = self.session.scalars(
            select(Project).where(Project.org_id == self.org_id, Project.slug == str(slug).strip().lower())
        ).first()
        if found is None:
            names = ", ".join(p.slug for p in self.projects()) or "none"
            raise NotFound(f"project: no project {slug!r} in this organization (its projects: {names})")
        return found

    def issue(self, issue_id: str) -> tuple[Project, IssueSummary]:
        text = str(issue_id).strip()
        if text.isdigit():
            for project in self.projects():
                summary = issue_summary(self.warehouse, self.org_id, project.id, int(text))
                if summary is not None:
                    return project, summary
        raise NotFound(f"issue_id: no issue {issue_id!r} in this organization")

    def require_write(self) -> None:
        if "write" not in self.identity.scopes:
            raise WriteRefused("scope: this token has the read scope only; write tools need scope write")
        if self.identity.role == "viewer":
            raise WriteRefused("role: a viewer changes nothing; ask an owner for the member role")

    @property
    def actor(self) -> str:
        """Who changes are attributed to: the e-mail, or ``api:<key>`` for the organization's API key."""
        return self.identity.email or f"api:{self.identity.token_id}"


def iso(value: datetime | None) -> str | None:
    if value is None:
        return None
    return value.isoformat(timespec="seconds").replace("+00:00", "Z")
