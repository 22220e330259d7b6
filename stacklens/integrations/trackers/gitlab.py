"""GitLab.com and self-managed GitLab (REST API v4, a personal/project access token in ``PRIVATE-TOKEN``).

A project is addressed by its full path (``group/sub/project``) URL-encoded as the ``:id`` of the API, as the
API documents (``group%2Fsub%2Fproject``).
"""

from __future__ import annotations

import re
from urllib.parse import quote, urlsplit

from stacklens.integrations.document import Document, to_markdown
from stacklens.integrations.trackers.base import (
    Account,
    Ticket,
    Tracker,
    TrackerRefused,
    strip_base,
    text,
)

PUBLIC = "https://gitlab.com"
PATH_RE = re.compile(r"^[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)+$")
URL_RE = re.compile(r"^/(.+?)/-/(?:issues|work_items)/(\d+)/?$")
KEY_RE = re.compile(r"^(?:([A-Za-z0-9_./-]+))?#?(\d+)$")


class GitLab(Tracker):
    label = "GitLab"

    @property
    def api(self) -> str:
        base = strip_base(self.connection.base_url or PUBLIC)
        return base if base.endswith("/api/v4") else f"{base}/api/v4"

    def headers(self) -> dict[str, str]:
        return {"PRIVATE-TOKEN": self.connection.token}

    def account(self) -> Account:
        who, where = "the token's user (GET /user)", "the projects the token can reach"
        user = self.as_object(self.call("GET", f"{self.api}/user", what=who), who)
        projects = self.as_objects(
            self.call(
                "GET",
                f"{self.api}/projects?membership=true&simple=true&per_page=100&order_by=last_activity_at",
                what=where,
            ),
            where,
        )
        names = [
            p["path_with_namespace"]
            for p in projects
            if isinstance(p.get("path_with_namespace"), str) and p["path_with_namespace"]
        ]
        return Account(name=text(user.get("username")), targets=names)

    def create(self, target: str, title: str, body: Document) -> Ticket:
        path = _path(target)
        data = self.call(
            "POST",
            f"{self.api}/projects/{quote(path, safe='')}/issues",
            {"title": title[:255], "description": to_markdown(body)},
            what=f"project {path}",
            creates=True,
        )
        return self._ticket(path, data, f"the new issue in {path}")

    def get(self, reference: str, target: str = "") -> Ticket:
        path, iid = parse_reference(reference, target)
        what = f"issue {path}#{iid}"
        data = self.call("GET", f"{self.api}/projects/{quote(path, safe='')}/issues/{iid}", what=what)
        return self._ticket(path, data, what)

    def find_marker(self, target: str, marker: str) -> Ticket | None:
        path = _path(target)
        what = f"a search in {path}"
        data = self.call(
            "GET",
            f"{self.api}/projects/{quote(path, safe='')}/issues?search={quote(marker)}&in=description",
            what=what,
        )
        found = self.as_objects(data, what)
        return self._ticket(path, found[0], what) if found else None

    def _ticket(self, path: str, data: object, what: str) -> Ticket:
        issue = self.as_object(data, what)
        return Ticket(
            key=f"{path}#{self.required(issue, 'iid', what)}",
            url=text(issue.get("web_url")),
            state="closed" if issue.get("state") == "closed" else "open",
            target=path,
        )


def _path(target: str) -> str:
    target = (target or "").strip().strip("/")
    if not PATH_RE.match(target):
        raise TrackerRefused(f"target: a GitLab project is written group/project (got {target[:80]!r})")
    return target


def parse_reference(reference: str, target: str) -> tuple[str, int]:
    """``https://gitlab.example.com/g/p/-/issues/5``, ``g/p#5`` or ``5`` (in ``target``)."""
    text = reference.strip()
    if "://" in text:
        match = URL_RE.match(urlsplit(text).path)
        if match:
            return match.group(1), int(match.group(2))
    else:
        match = KEY_RE.match(text)
        if match:
            return _path(match.group(1) or target), int(match.group(2))
    raise TrackerRefused(
        f"reference: give a GitLab issue URL, group/project#number or a number (got {text[:80]!r})"
    )
