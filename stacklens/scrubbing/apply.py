"""Running a project's rules over a payload (an event, a transaction, a replay event, a log record).

The payload is walked once for all rules, copy-on-write (a subtree no rule touched comes back as the same
object). Each node's key and value types step every rule's selector (:func:`~.selectors.step`); the combined
state of all rules gets a small number, and the step from a state under a key is remembered, so a node costs
one dictionary look-up whatever the number of rules. A rule whose selector matches a node covers everything
inside it; a subtree that no rule covers and none can still reach is not walked. Only values are changed:
strings (and numbers, as text) have what the rule's type finds masked (``*``), hashed (HMAC-SHA256 under the
project's salt, 16 hex digits: the same value gives the same hash, so it still groups and counts) or the whole
field removed (a list item becomes ``null``).
"""

from __future__ import annotations

import hashlib
import hmac
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from stacklens.scrubbing.patterns import may_find
from stacklens.scrubbing.rules import CheckedRule, RuleSpec, check_rules
from stacklens.scrubbing.selectors import done, step

_MAX_DEPTH = 64
_MAX_STEPS = 100_000  # remembered steps per rule set; cleared past it (list indexes and ids vary)
_REMOVED = object()
_SAME = object()
_UNSEEN = object()
_MAX_LEAVES = 100_000  # remembered leaf answers per rule set (~15 MB at most), cleared past it
_MAX_REMEMBERED_TEXT = 200  # longer texts (messages, bodies) are rarely sent twice: not remembered

# The semantic kind of a node, from its parent's kind and its key (Sentry's event schema); its value types.
_CHILD_KIND = {
    ("event", "exception"): "exceptions",
    ("event", "threads"): "threads",
    ("event", "stacktrace"): "stacktrace",
    ("event", "request"): "request",
    ("event", "user"): "user",
    ("event", "logentry"): "logentry",
    ("event", "breadcrumbs"): "breadcrumbs",
    ("event", "spans"): "spans",
    ("event", "sdk"): "sdk",
    ("event", "message"): "message",
    ("exceptions", "values"): "exceptions",
    ("threads", "values"): "threads",
    ("breadcrumbs", "values"): "breadcrumbs",
    ("exception", "stacktrace"): "stacktrace",
    ("exception", "raw_stacktrace"): "stacktrace",
    ("thread", "stacktrace"): "stacktrace",
    ("stacktrace", "frames"): "frames",
    ("logentry", "message"): "message",
    ("logentry", "formatted"): "message",
}
# A list item's kind, by the list's kind.
_ITEM_KIND = {
    "exceptions": "exception",
    "threads": "thread",
    "frames": "frame",
    "breadcrumbs": "breadcrumb",
    "spans": "span",
}
_KIND_TYPES = {
    "event": ("event",),
    "exception": ("exception", "error"),
    "thread": ("thread",),
    "stacktrace": ("stacktrace",),
    "frame": ("frame",),
    "request": ("request", "http"),
    "user": ("user",),
    "logentry": ("logentry",),
    "message": ("message",),
    "breadcrumb": ("breadcrumb",),
    "span": ("span",),
    "sdk": ("sdk",),
}


def _below(kind: str) -> frozenset[str]:
    """The schema types of the kinds that occur anywhere below a node of ``kind``."""
    found: set[str] = set()
    todo = [kind]
    seen = {kind}
    while todo:
        current = todo.pop()
        children = [c for (parent, _), c in _CHILD_KIND.items() if parent == current]
        if current in _ITEM_KIND:
            children.append(_ITEM_KIND[current])
        for child in children:
            found.update(_KIND_TYPES.get(child, ()))
            if child not in seen:
                seen.add(child)
                todo.append(child)
    return frozenset(found)


_BELOW = {kind: _below(kind) for kind in {"", "event", *_CHILD_KIND.values(), *_ITEM_KIND.values()}}
# Lists of [name, value] pairs (Sentry's headers, cookies and query): the value is selected by its name.
_PAIR_LISTS = frozenset({"headers", "cookies", "query_string", "env"})
_TYPES_CACHE: dict[tuple[str, str], frozenset[str]] = {}
_MAX_INDEX = 256
_INDEXES = [str(i) for i in range(_MAX_INDEX)]  # list indexes as keys, made once


def _primitive(value: Any) -> str:
    kind = type(value)
    if kind is str:
        return "string"
    if kind is dict:
        return "object"
    if kind is list:
        return "array"
    if kind is bool:
        return "boolean"
    if kind is int or kind is float:
        return "number"
    return "null"


def _types(kind: str, value: Any) -> frozenset[str]:
    primitive = _primitive(value)
    found = _TYPES_CACHE.get((kind, primitive))
    if found is None:
        found = frozenset((*_KIND_TYPES.get(kind, ()), primitive))
        _TYPES_CACHE[(kind, primitive)] = found
    return found


@dataclass(eq=False)  # compared by identity: one compiled set per stored set (stacklens.scrubbing.store)
class ScrubRules:
    """A project's compiled rules and the salt its ``hash`` method is keyed with."""

    rules: tuple[CheckedRule, ...]
    salt: bytes
    _states: list[tuple[tuple[frozenset[int], ...], ...]] = field(default_factory=list, repr=False)
    _ids: dict[tuple[tuple[frozenset[int], ...], ...], int] = field(default_factory=dict, repr=False)
    _steps: dict[tuple[int, str | None, str, type], tuple[int, int, bool]] = field(
        default_factory=dict, repr=False
    )
    # (state, rules in scope, key, kind, value) or (rules in scope, key, value) → the leaf's new value,
    # _SAME or _REMOVED: names, paths and ids repeat from event to event.
    _leaves: dict[tuple[Any, ...], Any] = field(default_factory=dict, repr=False)
    _start: int = -1
    _subsets: dict[int, ScrubRules] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled (to an ingest worker process) as its specs: compiled patterns do not pickle.
        return (_rebuild, ([r.spec for r in self.rules], self.salt))

    def apply(self, payload: dict[str, Any], raw: bytes | None = None) -> dict[str, Any]:
        """The payload with the rules applied (the input is not changed). With ``raw``, the JSON text it was
        parsed from, rules whose type cannot find anything in it are skipped (an e-mail rule on a line
        without ``@``), and a payload no rule can touch is not walked."""
        if not self.rules:
            return payload
        if raw is not None:
            active = 0
            for index, rule in enumerate(self.rules):
                if may_find(rule.spec.type, raw):
                    active |= 1 << index
            if not active:
                return payload
            if active != (1 << len(self.rules)) - 1:
                return self._subset(active).apply(payload)
        if self._start < 0:
            self._start = self._state_id(
                tuple(tuple(atom.start() for atom in r.selector.atoms) for r in self.rules)
            )
        out = self._walk(payload, None, "event", self._start, 0, 0)
        return {} if out is _REMOVED else out

    def _subset(self, active: int) -> ScrubRules:
        """The rules whose bits are set in ``active``, compiled once (they keep their order and salt)."""
        found = self._subsets.get(active)
        if found is None:
            chosen = tuple(rule for index, rule in enumerate(self.rules) if active >> index & 1)
            found = self._subsets.setdefault(active, ScrubRules(chosen, self.salt))
        return found

    def _state_id(self, state: tuple[tuple[frozenset[int], ...], ...]) -> int:
        found = self._ids.get(state)
        if found is None:
            with self._lock:
                found = self._ids.setdefault(state, len(self._states))
                if found == len(self._states):
                    self._states.append(state)
        return found

    def _step(self, memo: tuple[int, str | None, str, type], value: Any) -> tuple[int, int, bool]:
        """(next state, rules whose selector matches this node (bits), whether any rule may match below) for
        ``memo``: (state, key, kind, the value's Python type)."""
        sid, key, kind, _ = memo
        lowered = key.lower() if key is not None else None
        types = _types(kind, value)
        state = self._states[sid]
        next_state = []
        matched_bits = 0
        alive = False
        for index, rule in enumerate(self.rules):
            atoms = rule.selector.atoms
            stepped = tuple(
                step(atom, s, lowered, types) for atom, s in zip(atoms, state[index], strict=True)
            )
            next_state.append(stepped)
            if rule.selector.expr.holds(tuple(done(a, s) for a, s in zip(atoms, stepped, strict=True))):
                matched_bits |= 1 << index
            # Only some schema types occur below a node of this kind (none below a plain one).
            below = _BELOW[kind]
            reachable = tuple(bool(s) and a.viable(s, below) for a, s in zip(atoms, stepped, strict=True))
            if rule.selector.expr.possible(reachable):
                alive = True
        found = (self._state_id(tuple(next_state)), matched_bits, alive)
        if len(self._steps) > _MAX_STEPS:
            self._steps.clear()
        self._steps[memo] = found
        return found

    def _walk(self, value: Any, key: str | None, kind: str, sid: int, scope: int, depth: int) -> Any:
        """The root (``key`` None) or any node; the loops below step their children inline (a call per node
        was most of the cost)."""
        memo = (sid, key, kind, type(value))
        found = self._steps.get(memo)
        sid, matched, alive = found if found is not None else self._step(memo, value)
        scope |= matched
        kind_of = type(value)
        if kind_of is str or kind_of is int or kind_of is float:
            return self._leaf(value, key, scope) if scope else value
        if (not scope and not alive) or depth >= _MAX_DEPTH:
            return value
        if kind_of is dict:
            return self._walk_dict(value, kind, sid, scope, depth)
        if kind_of is list:
            return self._walk_list(value, key, kind, sid, scope, depth)
        return value

    def _walk_dict(self, value: dict[str, Any], kind: str, sid: int, scope: int, depth: int) -> Any:
        steps, leaves = self._steps, self._leaves
        out: dict[str, Any] | None = None
        for child_key, item in value.items():
            kind_of = type(item)
            child_kind = _CHILD_KIND.get((kind, child_key), "") if kind else ""
            if (kind_of is str and len(item) <= _MAX_REMEMBERED_TEXT) or kind_of is int or kind_of is float:
                # A short leaf: one look-up for its step and its answer together (names, ids and paths
                # repeat from event to event).
                remembered = (sid, scope, child_key, child_kind, item)
                new = leaves.get(remembered, _UNSEEN)
                if new is _UNSEEN:
                    new = self._fresh_leaf(item, child_key, child_kind, sid, scope)
                    if len(leaves) > _MAX_LEAVES:
                        leaves.clear()
                    leaves[remembered] = new
                if new is _SAME:
                    continue
                if out is None:
                    out = dict(value)
                if new is _REMOVED:
                    del out[child_key]
                else:
                    out[child_key] = new
                continue
            memo = (sid, child_key, child_kind, kind_of)
            found = steps.get(memo)
            if found is None:
                found = self._step(memo, item)
            child_scope = scope | found[1]
            if kind_of is str or kind_of is int or kind_of is float:
                if not child_scope:
                    continue
                new = self._leaf(item, child_key, child_scope)
            elif (not child_scope and not found[2]) or depth + 1 >= _MAX_DEPTH:
                continue
            elif kind_of is dict:
                new = self._walk_dict(item, child_kind, found[0], child_scope, depth + 1)
            elif kind_of is list:
                new = self._walk_list(item, child_key, child_kind, found[0], child_scope, depth + 1)
            else:
                continue
            if new is not item:
                if out is None:
                    out = dict(value)
                if new is _REMOVED:
                    del out[child_key]
                else:
                    out[child_key] = new
        return value if out is None else out

    def _walk_list(
        self, value: list[Any], key: str | None, kind: str, sid: int, scope: int, depth: int
    ) -> Any:
        pairs = key is not None and key.lower() in _PAIR_LISTS
        item_kind = _ITEM_KIND.get(kind, "")
        out: list[Any] | None = None
        for index, item in enumerate(value):
            if pairs and type(item) is list and len(item) == 2 and type(item[0]) is str:
                inner = self._walk(item[1], item[0], "", sid, scope, depth + 1)
                new: Any = item if inner is item[1] else [item[0], None if inner is _REMOVED else inner]
            else:
                new = self._walk(
                    item,
                    _INDEXES[index] if index < _MAX_INDEX else str(index),
                    item_kind,
                    sid,
                    scope,
                    depth + 1,
                )
            if new is not item:
                if out is None:
                    out = list(value)
                out[index] = None if new is _REMOVED else new
        return value if out is None else out

    def _fresh_leaf(self, value: Any, key: str, kind: str, sid: int, scope: int) -> Any:
        memo = (sid, key, kind, type(value))
        found = self._steps.get(memo)
        if found is None:
            found = self._step(memo, value)
        scope |= found[1]
        return self._scrub_leaf(value, key, scope) if scope else _SAME

    def _leaf(self, value: Any, key: str | None, scope: int) -> Any:
        if type(value) is str and len(value) > _MAX_REMEMBERED_TEXT:
            return self._scrub_leaf(value, key, scope)
        memo = (scope, key, value)
        found = self._leaves.get(memo, _UNSEEN)
        if found is _UNSEEN:
            found = self._scrub_leaf(value, key, scope)
            if len(self._leaves) > _MAX_LEAVES:
                self._leaves.clear()
            self._leaves[memo] = found
        return value if found is _SAME else found

    def _scrub_leaf(self, value: Any, key: str | None, scope: int) -> Any:
        text = value if type(value) is str else str(value)
        lowered = key.lower() if key is not None else None
        changed = False
        for index, rule in enumerate(self.rules):
            if not scope >> index & 1:
                continue
            spans = rule.find(text, lowered)
            if not spans:
                continue
            if rule.spec.method == "remove":
                return _REMOVED
            text = _replace(text, spans, rule.spec.method, self.salt)
            changed = True
        return text if changed else _SAME


def _replace(text: str, spans: Sequence[tuple[int, int]], method: str, salt: bytes) -> str:
    parts = []
    last = 0
    for start, end in spans:
        if start < last:
            continue  # overlapping finds (a group inside a group): the first wins
        parts.append(text[last:start])
        found = text[start:end]
        if method == "mask":
            parts.append("*" * len(found))
        else:
            parts.append(
                hmac.new(salt, found.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()[:16]
            )
        last = end
    parts.append(text[last:])
    return "".join(parts)


def _rebuild(specs: Sequence[RuleSpec], salt: bytes) -> ScrubRules:
    return ScrubRules(tuple(check_rules(specs)), salt)


NO_RULES = ScrubRules((), b"")
