"""Steps that may block raise inside a loop-only section and nowhere else; the signal passes through
handlers of ordinary failures."""

from __future__ import annotations

import pytest

from stacklens.blocking import WouldBlock, loop_only, may_block, on_loop


def test_may_block_does_nothing_outside_a_loop_only_section() -> None:
    assert not on_loop()
    may_block("a control-store read")


def test_inside_a_loop_only_section_a_step_that_may_block_stops_it_and_the_section_ends_clean() -> None:
    with loop_only():
        assert on_loop()
        with pytest.raises(WouldBlock, match="a control-store read"):
            may_block("a control-store read")
    assert not on_loop(), "the section is over whatever ended it"


def test_a_handler_of_ordinary_failures_does_not_swallow_it() -> None:
    def read_maps() -> str:
        try:
            may_block("a read of the source-map manifest")
        except Exception:  # noqa: BLE001 - what a step that lands without maps on any failure does
            return "grouped without maps"
        return "grouped with maps"

    with pytest.raises(WouldBlock), loop_only():
        read_maps()
    assert read_maps() == "grouped with maps"
