"""A project's data scrubbing rules (docs/scrubbing.md): `GET/PUT /api/projects/{slug}/scrubbing` with
`{"rules": [{"method", "type", "pattern", "applies_to"}]}`, applied at ingest before anything is stored, and
`POST /api/projects/{slug}/scrubbing/preview` `{"event_id"}`: a stored event before and after the rules."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter
from pydantic import BaseModel, Field

from api.deps import ApiAuth, DbSession, OrgProject, Warehouse
from api.errors import ApiError
from api.routers.auth import AUTH_ERRORS, ErrorBody
from stacklens.scrubbing.patterns import MAX_PATTERN
from stacklens.scrubbing.preview import preview_event
from stacklens.scrubbing.rules import BUILT_IN, DEFAULT_SELECTOR, MAX_RULES, RuleSpec, spec_of
from stacklens.scrubbing.selectors import MAX_SELECTOR
from stacklens.scrubbing.store import get_rules, rules_for_preview, set_rules

router = APIRouter(prefix="/api", tags=["scrubbing"])
ERRORS = {
    **AUTH_ERRORS,
    400: {"model": ErrorBody, "description": "A rule is wrong: the detail names its index and field."},
    404: {"model": ErrorBody, "description": "No such project (or event) in this organization."},
}


class Rule(BaseModel):
    method: Literal["mask", "remove", "hash"] = Field(
        description="mask: each character found becomes `*`; remove: the whole field goes; hash: what is "
        "found becomes 16 hex digits of an HMAC-SHA256 keyed per project (the same value, the same hash)."
    )
    type: Literal["credit_card", "email", "ip", "iban", "password", "bearer", "pattern"] = Field(
        description="What to find in the selected values; `password` takes whole values under secret-like "
        "key names; `pattern` takes the `pattern` (RE2 syntax; with groups, only the groups)."
    )
    pattern: str | None = Field(default=None, max_length=MAX_PATTERN, examples=[r"cust_(\d+)"])
    applies_to: str = Field(
        default=DEFAULT_SELECTOR,
        max_length=MAX_SELECTOR,
        description="Sentry selector: `$string`, `$http.headers`, `extra.*`, `$frame.vars`, `**`, "
        "`request.headers.Authorization`, combined with `&&`, `||`, `!`.",
        examples=["$string", "extra.*", "$http.headers && !request.headers.Accept"],
    )


class ScrubbingRules(BaseModel):
    rules: list[Rule] = Field(max_length=MAX_RULES)


class ScrubbingOut(ScrubbingRules):
    built_in: list[str] = Field(description="What every project scrubs at ingest before these rules run.")


class PreviewIn(BaseModel):
    event_id: str = Field(max_length=64)
    rules: list[Rule] | None = Field(
        default=None, max_length=MAX_RULES, description="Rules to try instead of the saved ones."
    )


class FieldChange(BaseModel):
    path: str
    before: Any
    after: Any = Field(description="null when the rules remove the field")


class PreviewOut(BaseModel):
    event_id: str
    changes: list[FieldChange]
    before: dict[str, Any] = Field(description="The event as stored (after the scrubbing of its time).")
    after: dict[str, Any]


def _specs(rules: list[Rule]) -> list[RuleSpec]:
    return [spec_of(rule.model_dump(), index) for index, rule in enumerate(rules)]


def _out(specs: list[RuleSpec]) -> ScrubbingOut:
    return ScrubbingOut(rules=[Rule.model_validate(spec.as_json()) for spec in specs], built_in=BUILT_IN)


@router.get("/projects/{slug}/scrubbing", response_model=ScrubbingOut, responses=ERRORS)
def get_scrubbing(auth: ApiAuth, project: OrgProject) -> ScrubbingOut:
    return _out(get_rules(project))


@router.put("/projects/{slug}/scrubbing", response_model=ScrubbingOut, responses=ERRORS)
def put_scrubbing(auth: ApiAuth, db: DbSession, project: OrgProject, body: ScrubbingRules) -> ScrubbingOut:
    """Replace the project's rules; each is checked (selector, RE2 pattern) and nothing is saved when one is
    wrong. Events received from the next request on are scrubbed by them."""
    return _out(set_rules(db, auth.org_id, project, _specs(body.rules)))


@router.post("/projects/{slug}/scrubbing/preview", response_model=PreviewOut, responses=ERRORS)
def preview_scrubbing(auth: ApiAuth, project: OrgProject, client: Warehouse, body: PreviewIn) -> PreviewOut:
    """A stored event of the project before and after the saved rules (or `rules`, unsaved); nothing is
    written."""
    rules = rules_for_preview(project, None if body.rules is None else _specs(body.rules))
    found = preview_event(client, auth.org_id, project.id, body.event_id, rules)
    if found is None:
        raise ApiError(404, "Not Found", f"no event {body.event_id!r} in project {project.slug!r}")
    return PreviewOut(
        event_id=found.event_id,
        changes=[FieldChange(path=c.path, before=c.before, after=c.after) for c in found.changes],
        before=found.before,
        after=found.after,
    )
