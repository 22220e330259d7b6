"""Shared set-up of the alerting tests: a migrated control store with an organization, an SMTP server."""

from __future__ import annotations

import socket
from dataclasses import dataclass, field

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP as SmtpProtocol  # noqa: N811 - says which SMTP: the protocol class

from stacklens.control.accounts import create_organization
from stacklens.control.db import migrate_control_store, session_scope
from stacklens.control.projects import create_project
from stacklens.settings import Settings


def org_with_project(settings: Settings, name: str = "Acme") -> tuple[int, int, str]:
    """A migrated control store with one organization and project: (org id, project id, project slug)."""
    migrate_control_store(settings)
    with session_scope(settings) as session:
        org, _ = create_organization(session, name, f"owner@{name.lower()}.test", "a-long-password-1")
        project, _ = create_project(session, org.id, f"{name} shop", "javascript")
        return org.id, project.id, project.slug


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class MailSink:
    """An aiosmtpd handler that keeps every message; ``refuse`` makes RCPT answer 550."""

    messages: list = field(default_factory=list)
    refuse: bool = False

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if self.refuse:
            return "550 5.1.1 mailbox unavailable"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        self.messages.append(envelope)
        return "250 Message accepted for delivery"


def start_smtp(sink: MailSink) -> Controller:
    controller = Controller(sink, hostname="127.0.0.1", port=free_port())
    controller.factory = lambda: SmtpProtocol(sink, hostname="stacklens-test")
    controller.start()
    return controller
