"""The one JSON depth guard: exact outside strings, both ways the count can go wrong, and its refusals."""

from __future__ import annotations

import json
import random
import time
from typing import Any

import pytest

from stacklens.ingest.jsondepth import (
    MAX_JSON_DEPTH,
    JsonTooDeep,
    check_depth,
    counted_within,
    loads,
    nests_within,
    rounds_within,
    scanned_within,
    structure,
)
from stacklens.ingest.jsondepth import _brackets_within as brackets_within


def _nested(depth: int) -> bytes:
    return (
        b'{"a":[' * (depth // 2)
        + (b"[" if depth % 2 else b"")
        + b"1"
        + (b"]" if depth % 2 else b"")
        + b"]}" * (depth // 2)
    )


@pytest.mark.parametrize("depth", [0, 1, 2, MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH])
def test_texts_within_the_limit_pass(depth: int) -> None:
    text = _nested(depth)
    assert json.loads(text) is not None
    assert nests_within(text)


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 2_000, 10_000])
def test_texts_over_the_limit_fail(depth: int) -> None:
    assert not nests_within(_nested(depth))


def test_brackets_inside_strings_count_for_nothing() -> None:
    # Opening brackets in strings would make a shallow text look deep...
    inflated = json.dumps({"message": "[{" * 5_000, "list": ["[[[", "{{{"]}).encode()
    assert nests_within(inflated)
    # ...and closing ones would hide real depth from a plain count: the exact measure sees through them.
    hidden = b'["]",' * 500 + b"1" + b"]" * 500
    assert json.loads(hidden), "a real 500-level text"
    assert not nests_within(hidden)
    # Fewer levels hidden the same way: still measured exactly, at the limit and one past it.
    for depth in (MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1, 100):
        text = b'["]",' * depth + b"1" + b"]" * depth
        assert nests_within(text) is (depth <= MAX_JSON_DEPTH), depth


def test_escapes_never_end_or_start_a_string() -> None:
    text = rb'["\\", "\"[[[[", {"a": "\\\"]]]]"}, "\\\\"]'
    assert json.loads(text) == ["\\", '"[[[[', {"a": '\\"]]]]'}, "\\\\"]
    assert structure(text) == b"[[]]"
    deep_after_escapes = rb'["\\\"", ' + b"[" * 100 + b"]" * 100 + b"]"
    assert not nests_within(deep_after_escapes)


def test_unclosed_brackets_count_as_the_levels_a_parser_enters() -> None:
    for text in (b"[" * 10_000, b"{" * 10_000, b'{"a":' * 10_000, b"]" * 50 + b"[" * 100):
        assert not nests_within(text), text[:20]
    assert nests_within(b"]" * 10_000)  # a parser stops at the first one


@pytest.mark.parametrize("depth", [1, 2, MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1, 300])
def test_compiled_and_interpreted_counts_agree(depth: int) -> None:
    """The compiled build counts depth in one loop, the interpreted one deletes pairs in rounds."""
    shapes = (
        "[" * depth + "]" * depth,
        "[[][]" * depth + "]" * depth,
        "[]" * depth,
        "[" * depth,
        "][" * depth,
    )
    for shape in shapes:
        brackets = shape.encode()
        assert counted_within(brackets, MAX_JSON_DEPTH) == rounds_within(brackets, MAX_JSON_DEPTH), shape[:20]


def _random_value(rng: random.Random, depth: int) -> Any:
    """A JSON value up to ``depth`` levels whose strings hold brackets, quotes and backslashes."""
    strings = ["[", "]", "{", "}", '"', "\\", '\\"', '"[', "]]\\", "plain", "\\\\[", "é{"]
    if depth == 0 or rng.random() < 0.2:
        return rng.choice([rng.choice(strings) * rng.randint(1, 3), 1, None, True, 2.5])
    if rng.random() < 0.5:
        return [_random_value(rng, depth - 1) for _ in range(rng.randint(0, 3))]
    return {rng.choice(strings): _random_value(rng, depth - 1) for _ in range(rng.randint(0, 3))}


def test_the_one_pass_scan_measures_as_the_structure_does() -> None:
    """The compiled build measures in one pass over the text; on JSON texts (and on the shapes that are not
    JSON above) it answers what the structure's bracket count answers, at every limit."""
    rng = random.Random(2026)
    texts = [json.dumps(_random_value(rng, rng.randint(1, 12))).encode() for _ in range(400)]
    texts += [_nested(d) for d in (0, 1, 5, MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1)]
    texts += [b'["]",' * 70 + b"1" + b"]" * 70, rb'["\\\"", ' + b"[" * 100 + b"]" * 100 + b"]"]
    texts += [b"[" * 100, b"]" * 100, b"]" * 50 + b"[" * 100]
    for text in texts:
        for limit in (1, 2, 3, 5, 8, MAX_JSON_DEPTH):
            assert scanned_within(text, limit) == brackets_within(structure(text), limit), (text[:60], limit)


def test_refusals_name_the_limit_and_where() -> None:
    with pytest.raises(JsonTooDeep, match=f"^the event nests deeper than {MAX_JSON_DEPTH} levels$"):
        loads(b"[" * 10_000 + b"]" * 10_000, where="the event")
    with pytest.raises(JsonTooDeep, match="deeper than 3 levels"):
        check_depth(b"[[[[]]]]", 3)
    assert loads('{"a": [1, "[[["]}') == {"a": [1, "[[["]}
    with pytest.raises(ValueError, match="Expecting"):
        loads(b"[1,")  # not JSON: the parser's own words


def test_the_measure_costs_little_on_large_texts() -> None:
    """A 20 MiB body (the largest JSON body accepted) is measured in well under a second."""
    item = json.dumps({"name": "x" * 40, "tags": [["a", "b\\"], {"c": "d[", "e": [1, 2, 3]}]})
    text = ("[" + ",".join([item] * 200_000) + "]").encode()
    assert len(text) > 20 * 1024 * 1024
    started = time.perf_counter()
    assert nests_within(text)
    assert time.perf_counter() - started < 1.0
