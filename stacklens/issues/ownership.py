"""Ownership rules in Sentry's syntax: which member or team owns an issue, from what its event shows.

One rule per line, ``<matcher>:<pattern> <owner> [<owner> …]``; a line starting with ``#`` followed by a space
or nothing else, or an empty line, is a comment. Matchers:

* ``path:`` — a frame's ``filename`` or ``abs_path`` (any frame of any exception in the chain);
* ``module:`` — a frame's ``module``;
* ``url:`` — the request URL;
* ``tags.<key>:`` or ``tag:<key>:`` — the event's tag ``<key>``;
* ``release:`` — the event's release.

Patterns are globs: ``*`` matches any run of characters (``/`` included), ``?`` one character; matching
ignores case. A ``path:`` pattern also matches at any ``/`` of a longer path (``src/checkout/*`` matches
``/app/src/checkout/pay.py``), as a CODEOWNERS path does. Owners are ``#team-slug`` or a member's e-mail.
When several rules match, the last one wins (as in Sentry) and its first owner is assigned.

What a sender controls is bounded before it is matched (an event's frames are the sender's): a frame path
longer than :data:`MAX_MATCHED` characters is matched by its last :data:`MAX_MATCHED` (the file and the
folders nearest it; no match starts inside the cut folder name), a module, URL, tag or release by its first
:data:`MAX_MATCHED`; at most :data:`MAX_VALUES` distinct paths and modules of an event are looked at (those
nearest the crash). Matching is linear in what is matched (:mod:`stacklens.globs`), also at every ``/`` of
a path; a pattern is at most :data:`stacklens.globs.MAX_PATTERN` characters.

:func:`from_codeowners` turns a GitHub/GitLab CODEOWNERS file into ``path:`` rules: ``@org/team`` becomes
``#team``, ``@user`` the member whose handle it is (e-mail local part or name), e-mails stay.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from stacklens.errors import InvalidInput
from stacklens.globs import MAX_PATTERN, compile_glob

MATCHERS = ("path", "module", "url", "tags", "release")
MAX_RULES = 500
MAX_TEXT = 50_000
# What one rule looks at, at most: the characters of a value and the distinct paths (and modules) of an
# event. A 120,000-character frame path under 21 rules held the alerts of every organization for minutes.
MAX_MATCHED = 1_024
MAX_VALUES = 256
_RULE = re.compile(r"^(path|module|url|release|tags\.[\w.\-]+|tag:[\w.\-]+):(\S+)\s+(.+)$")


@dataclass(frozen=True)
class Rule:
    kind: str  # path | module | url | tags | release
    pattern: str
    owners: tuple[str, ...]  # "#slug" or e-mail, as written (e-mails lower-cased)
    text: str  # the rule as written, for "matched …"
    tag: str = ""  # the tag key of a tags rule


@dataclass
class EventFacts:
    """What the rules look at in an issue's event."""

    paths: list[str] = field(default_factory=list)
    modules: list[str] = field(default_factory=list)
    url: str = ""
    tags: dict[str, str] = field(default_factory=dict)
    release: str = ""


def parse(text: str, known_owner: Callable[[str], bool] | None = None) -> list[Rule]:
    """The rules of ``text``; :class:`InvalidInput` names the first line that is not a rule (or whose owner
    ``known_owner`` does not know)."""
    if len(text or "") > MAX_TEXT:
        raise InvalidInput(f"rules: at most {MAX_TEXT:,} characters")
    rules: list[Rule] = []
    for number, raw in enumerate((text or "").splitlines(), start=1):
        line = raw.strip()
        if not line or line == "#" or line.startswith("# ") or line.startswith("##"):
            continue
        match = _RULE.match(line)
        if match is None:
            raise InvalidInput(
                f"rules line {number}: write <path|module|url|tags.KEY|release>:<pattern> <owner> …, "
                f"got {line[:80]!r}"
            )
        matcher, pattern, owners_text = match.groups()
        if len(pattern) > MAX_PATTERN:
            raise InvalidInput(f"rules line {number}: a pattern has at most {MAX_PATTERN:,} characters")
        owners = tuple(o if o.startswith("#") else o.lower() for o in owners_text.split())
        for owner in owners:
            if not (owner.startswith("#") and len(owner) > 1) and "@" not in owner:
                raise InvalidInput(f"rules line {number}: owner {owner!r} is neither #team nor an e-mail")
            if known_owner is not None and not known_owner(owner):
                raise InvalidInput(
                    f"rules line {number}: {owner} is not a team or member of this organization"
                )
        kind, tag = matcher, ""
        if matcher.startswith("tags."):
            kind, tag = "tags", matcher[5:]
        elif matcher.startswith("tag:"):
            kind, tag = "tags", matcher[4:]
        rules.append(Rule(kind, pattern, owners, line, tag))
        if len(rules) > MAX_RULES:
            raise InvalidInput(f"rules: at most {MAX_RULES} rules")
    return rules


def _path_pattern(pattern: str) -> str:
    pattern = pattern.lstrip("/").lower()
    return pattern + "*" if pattern.endswith("/") else pattern


def _value(value: str) -> str:
    return value[:MAX_MATCHED].lower()


def _path(path: str) -> tuple[str, bool]:
    """A frame path as matched (lower-case, ``/`` separators, at most the bound) and whether its own start
    is a place to match from."""
    path = path.replace("\\", "/").lower()
    if len(path) > MAX_MATCHED:
        # The last MAX_MATCHED characters, plus the one before them: when that one is a "/", matching may
        # start right after it; the cut start itself is inside a name, never a place to match from.
        return path[-MAX_MATCHED - 1 :], False
    return path, True


@dataclass(frozen=True)
class _Matched:
    """An event's facts as the rules match them: bounded and lower-cased once, not once per rule."""

    paths: tuple[tuple[str, bool], ...]
    modules: tuple[str, ...]
    url: str
    tags: dict[str, str]
    release: str


def _matched(facts: EventFacts) -> _Matched:
    return _Matched(
        tuple(_path(p) for p in dict.fromkeys(facts.paths[-MAX_VALUES:]) if p),
        tuple(_value(m) for m in dict.fromkeys(facts.modules[-MAX_VALUES:]) if m),
        _value(facts.url),
        {key: _value(value) for key, value in facts.tags.items()},
        _value(facts.release),
    )


def _glob(pattern: str, value: str) -> bool:
    return bool(value) and compile_glob(pattern.lower()).match(value)


def _matches(rule: Rule, facts: _Matched) -> bool:
    if rule.kind == "path":
        glob = compile_glob(_path_pattern(rule.pattern))
        return any(glob.match_after_slash(path, head=head) for path, head in facts.paths)
    if rule.kind == "module":
        return any(_glob(rule.pattern, m) for m in facts.modules)
    if rule.kind == "url":
        return _glob(rule.pattern, facts.url)
    if rule.kind == "tags":
        return rule.tag in facts.tags and _glob(rule.pattern, facts.tags[rule.tag])
    return _glob(rule.pattern, facts.release)


def matches(rule: Rule, facts: EventFacts) -> bool:
    """Whether ``rule`` matches what ``facts`` show (a path from its start or from any ``/`` in it)."""
    return _matches(rule, _matched(facts))


def owner_of(rules: Iterable[Rule], facts: EventFacts) -> tuple[str, Rule] | None:
    """(owner, rule) of the last matching rule, or ``None``."""
    matched = _matched(facts)
    found: tuple[str, Rule] | None = None
    for rule in rules:
        if _matches(rule, matched):
            found = (rule.owners[0], rule)
    return found


def facts_of(
    payload: str | Mapping[str, Any],
    *,
    url: str = "",
    release: str = "",
    tags: Mapping[str, str] | None = None,
) -> EventFacts:
    """The facts of a stored event (its scrubbed payload and the columns the warehouse keeps)."""
    data: Any = payload
    if isinstance(payload, str):
        try:
            data = json.loads(payload) if payload else {}
        except ValueError:
            data = {}
    if not isinstance(data, Mapping):
        data = {}
    facts = EventFacts(url=url, release=release, tags=dict(tags or {}))
    # Distinct, each where it last appears: the frames nearest the crash come last.
    paths: dict[str, None] = {}
    modules: dict[str, None] = {}
    exception = data.get("exception")
    values = exception.get("values") if isinstance(exception, Mapping) else exception
    for value in values if isinstance(values, list) else []:
        stack = value.get("stacktrace") if isinstance(value, Mapping) else None
        frames = stack.get("frames") if isinstance(stack, Mapping) else None
        for frame in frames if isinstance(frames, list) else []:
            if not isinstance(frame, Mapping):
                continue
            for key in ("filename", "abs_path"):
                if isinstance(frame.get(key), str) and frame[key]:
                    paths.pop(frame[key], None)
                    paths[frame[key]] = None
            if isinstance(frame.get("module"), str) and frame["module"]:
                modules.pop(frame["module"], None)
                modules[frame["module"]] = None
    facts.paths = list(paths)[-MAX_VALUES:]
    facts.modules = list(modules)[-MAX_VALUES:]
    return facts


_CODEOWNERS_LINE = re.compile(r"^(\S+)\s+(.+)$")


def from_codeowners(
    text: str, handles: Mapping[str, str], teams: Iterable[str] = ()
) -> tuple[str, list[str]]:
    """(rules text, notes) for a CODEOWNERS file; ``handles``: member handle (lower-case) → e-mail; ``teams``:
    the organization's team slugs. Owners that name nobody here are left out, each with a note; a line left
    with no owner becomes a note too."""
    slugs = set(teams)
    lines: list[str] = []
    notes: list[str] = []
    for number, raw in enumerate((text or "").splitlines(), start=1):
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#") or line.startswith("["):  # comments, GitLab sections
            continue
        match = _CODEOWNERS_LINE.match(line)
        if match is None:
            notes.append(f"line {number}: no owner, skipped")
            continue
        pattern, owners_text = match.groups()
        owners = []
        for owner in owners_text.split():
            if owner.startswith("@") and "/" in owner:
                slug = owner.rsplit("/", 1)[1].lower()
                if slug in slugs:
                    owners.append("#" + slug)
                else:
                    notes.append(f"line {number}: {owner} is no team here (create #{slug}), left out")
            elif owner.startswith("@"):
                email = handles.get(owner[1:].lower())
                if email:
                    owners.append(email)
                else:
                    notes.append(f"line {number}: {owner} is no member here, left out")
            elif "@" in owner:
                owners.append(owner.lower())
        if not owners:
            notes.append(f"line {number}: {pattern} has no owner here, skipped")
            continue
        lines.append(f"path:{pattern.lstrip('/')} {' '.join(owners)}")
    return "\n".join(lines), notes
