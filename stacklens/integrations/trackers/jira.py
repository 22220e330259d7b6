"""Jira Cloud (REST v3, e-mail + API token as basic auth, descriptions in Atlassian Document Format) and
Jira Data Center / Server (REST v2, a personal access token as Bearer, plain-text descriptions).

Which one is decided by the connection: an e-mail means Cloud's basic auth, none means a Data Center PAT.
A target is a project key (``OPS``); the issue type is ``Bug`` unless the connection names another.
"""

from __future__ import annotations

import base64
import re
from urllib.parse import quote, urlsplit

from stacklens.integrations.document import Document, to_adf, to_plain
from stacklens.integrations.trackers.base import (
    Account,
    Ticket,
    Tracker,
    TrackerRefused,
    member,
    strip_base,
    text,
)

PROJECT_RE = re.compile(r"^[A-Z][A-Z0-9_]{0,49}$")
KEY_RE = re.compile(r"^([A-Z][A-Z0-9_]{0,49})-(\d+)$")
DEFAULT_ISSUE_TYPE = "Bug"


class Jira(Tracker):
    label = "Jira"

    @property
    def cloud(self) -> bool:
        return bool(self.connection.email)

    @property
    def api(self) -> str:
        return f"{strip_base(self.connection.base_url)}/rest/api/{'3' if self.cloud else '2'}"

    def headers(self) -> dict[str, str]:
        if self.cloud:
            pair = f"{self.connection.email}:{self.connection.token}".encode()
            return {"Authorization": "Basic " + base64.b64encode(pair).decode("ascii")}
        return {"Authorization": f"Bearer {self.connection.token}"}

    def account(self) -> Account:
        who, where = "the token's user (GET /myself)", "the projects the token can reach"
        me = self.as_object(self.call("GET", f"{self.api}/myself", what=who), who)
        if self.cloud:
            page = self.call("GET", f"{self.api}/project/search?maxResults=100", what=where)
            projects = self.as_objects(self.as_object(page, where).get("values"), where)
        else:
            projects = self.as_objects(self.call("GET", f"{self.api}/project", what=where), where)
        name = text(me.get("displayName")) or text(me.get("emailAddress")) or text(me.get("name"))
        return Account(name=name, targets=[text(p.get("key")) for p in projects if text(p.get("key"))])

    def create(self, target: str, title: str, body: Document) -> Ticket:
        project = _project(target)
        fields = {
            "project": {"key": project},
            "summary": title[:255],  # Jira refuses summaries over 255 characters
            "description": to_adf(body) if self.cloud else to_plain(body),
            "issuetype": {"name": str(self.connection.options.get("issue_type") or DEFAULT_ISSUE_TYPE)},
        }
        data = self.call(
            "POST", f"{self.api}/issue", {"fields": fields}, what=f"project {project}", creates=True
        )
        what = f"the new issue in {project}"
        key = self.required(self.as_object(data, what), "key", what)
        return Ticket(key=key, url=self._browse(key), state="open", target=project)

    def get(self, reference: str, target: str = "") -> Ticket:
        key = parse_reference(reference, target)
        what = f"issue {key}"
        data = self.call("GET", f"{self.api}/issue/{key}?fields=status", what=what)
        return self._ticket(data, what)

    def find_marker(self, target: str, marker: str) -> Ticket | None:
        project = _project(target)
        what = f"a search in {project}"
        jql = quote(f'project = "{project}" AND text ~ "\\"{marker}\\""')
        # Cloud retired GET /search for /search/jql (2025); Data Center keeps /search.
        path = "search/jql" if self.cloud else "search"
        data = self.call("GET", f"{self.api}/{path}?jql={jql}&fields=status", what=what)
        issues = self.as_objects(self.as_object(data, what).get("issues"), what)
        return self._ticket(issues[0], what) if issues else None

    def _browse(self, key: str) -> str:
        return f"{strip_base(self.connection.base_url)}/browse/{key}"

    def _ticket(self, data: object, what: str) -> Ticket:
        key = self.required(self.as_object(data, what), "key", what)
        done = member(data, "fields", "status", "statusCategory", "key") == "done"
        return Ticket(
            key=key, url=self._browse(key), state="closed" if done else "open", target=key.split("-")[0]
        )


def _project(target: str) -> str:
    target = (target or "").strip().upper()
    if not PROJECT_RE.match(target):
        raise TrackerRefused(f"target: a Jira project is given by its key, like OPS (got {target[:80]!r})")
    return target


def parse_reference(reference: str, target: str) -> str:
    """``https://site/browse/OPS-12``, ``OPS-12``, or ``12`` in the project ``target``."""
    text = reference.strip()
    if "://" in text:
        text = urlsplit(text).path.rstrip("/").rsplit("/", 1)[-1]
    if text.isdigit() and target:
        text = f"{_project(target)}-{text}"
    if KEY_RE.match(text.upper()):
        return text.upper()
    raise TrackerRefused(f"reference: give a Jira issue URL or key like OPS-12 (got {reference[:80]!r})")
