"""The prefilled ticket of an issue: its title, facts, the top of its stack, a link back and the marker."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from stacklens.integrations.document import to_markdown
from stacklens.integrations.prefill import Draft, document, stack_top

CHAIN: list[dict[str, Any]] = [  # the frames' fields stack_top reads
    {
        "type": "KeyError",
        "value": "'sku'",
        "frames": [{"function": f"f{i}", "filename": "shop/cart.py", "lineno": 10 + i} for i in range(10)]
        + [{"function": "<module>", "filename": "<stdin>", "lineno": None}],
    }
]


def test_the_stack_top_is_the_exception_and_its_first_frames() -> None:
    lines = stack_top(CHAIN, frames=2).split("\n")
    assert lines == [
        "KeyError: 'sku'",
        "  at f0 (shop/cart.py:10)",
        "  at f1 (shop/cart.py:11)",
        "  … 9 more frames",
    ]
    assert stack_top([]) == ""
    assert stack_top([{"type": "Crash", "value": "", "frames": CHAIN[0]["frames"][-1:]}]) == (
        "Crash\n  at <module> (<stdin>)"
    )


def test_the_description_holds_notes_facts_stack_link_and_marker() -> None:
    summary = {
        "title": "KeyError: 'sku'",
        "level": "error",
        "events": 12,
        "first_seen": datetime(2026, 11, 20, 9, tzinfo=UTC),
    }
    draft = Draft(
        "KeyError: 'sku'", "Seen after the 1.3 deploy.", summary, stack_top(CHAIN), "https://lens.example/i/7"
    )
    text = to_markdown(document(draft, "stacklens:7:1"))
    for part in (
        "Seen after the 1.3 deploy.",
        "KeyError: 'sku'",
        "2026-11-20 09:00 UTC",
        "at f0 (shop/cart.py:10)",
        "https://lens.example/i/7",
        "StackLens reference: stacklens:7:1",
    ):
        assert part in text, part
    assert text.index("Seen after") < text.index("at f0") < text.index("StackLens reference")
