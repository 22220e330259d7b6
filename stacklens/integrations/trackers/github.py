"""GitHub and GitHub Enterprise Server (REST API, a fine-grained or classic personal access token).

github.com's API lives at ``https://api.github.com``; an Enterprise Server's at ``https://HOST/api/v3``, so
a connection's base URL may be either the web address (``https://github.example.com``) or the API address.
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

PUBLIC_WEB = "https://github.com"
PUBLIC_API = "https://api.github.com"
REPO_RE = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
URL_RE = re.compile(r"/([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)/(?:issues|pull)/(\d+)/?$")
KEY_RE = re.compile(r"^(?:([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+))?#?(\d+)$")


def api_root(base_url: str) -> str:
    base = strip_base(base_url or PUBLIC_API)
    if base in (PUBLIC_WEB, "https://www.github.com"):
        return PUBLIC_API
    if base == PUBLIC_API or base.endswith("/api/v3"):
        return base
    return f"{base}/api/v3"


class GitHub(Tracker):
    label = "GitHub"

    @property
    def api(self) -> str:
        return api_root(self.connection.base_url)

    def headers(self) -> dict[str, str]:
        return {
            "Authorization": f"Bearer {self.connection.token}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
        }

    def account(self) -> Account:
        who, where = "the token's user (GET /user)", "the repositories the token can reach"
        user = self.as_object(self.call("GET", f"{self.api}/user", what=who), who)
        repos = self.as_objects(
            self.call("GET", f"{self.api}/user/repos?per_page=100&sort=updated", what=where), where
        )
        names = [r["full_name"] for r in repos if isinstance(r.get("full_name"), str) and r["full_name"]]
        return Account(name=text(user.get("login")), targets=names)

    def create(self, target: str, title: str, body: Document) -> Ticket:
        repo = _repo(target)
        what = f"repository {repo}"
        data = self.call(
            "POST",
            f"{self.api}/repos/{repo}/issues",
            {"title": title[:256], "body": to_markdown(body)},
            what=what,
            creates=True,
        )
        return self._ticket(repo, data, f"the new issue in {repo}")

    def get(self, reference: str, target: str = "") -> Ticket:
        repo, number = parse_reference(reference, target)
        what = f"issue {repo}#{number}"
        data = self.call("GET", f"{self.api}/repos/{repo}/issues/{number}", what=what)
        return self._ticket(repo, data, what)

    def find_marker(self, target: str, marker: str) -> Ticket | None:
        repo = _repo(target)
        what = f"a search in {repo}"
        query = quote(f'"{marker}" repo:{repo} is:issue in:body')
        data = self.as_object(self.call("GET", f"{self.api}/search/issues?q={query}", what=what), what)
        items = self.as_objects(data.get("items"), what)
        return self._ticket(repo, items[0], what) if items else None

    def _ticket(self, repo: str, data: object, what: str) -> Ticket:
        issue = self.as_object(data, what)
        number = self.required(issue, "number", what)
        return Ticket(
            key=f"{repo}#{number}",
            url=text(issue.get("html_url")),
            state="closed" if issue.get("state") == "closed" else "open",
            target=repo,
        )


def _repo(target: str) -> str:
    target = (target or "").strip().strip("/")
    if not REPO_RE.match(target):
        raise TrackerRefused(f"target: a GitHub repository is written owner/name (got {target[:80]!r})")
    return target


def parse_reference(reference: str, target: str) -> tuple[str, int]:
    """``https://github.com/o/r/issues/12``, ``o/r#12`` or ``12`` (in ``target``) as (repo, number)."""
    text = reference.strip()
    if "://" in text:
        match = URL_RE.search(urlsplit(text).path)
        if match:
            return match.group(1), int(match.group(2))
    else:
        match = KEY_RE.match(text)
        if match:
            return match.group(1) or _repo(target), int(match.group(2))
    raise TrackerRefused(
        f"reference: give a GitHub issue URL, owner/repo#number or a number (got {text[:80]!r})"
    )
