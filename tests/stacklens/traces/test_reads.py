"""A trace id as the reads take it: 32 hex digits in any case, a UUID's dashes dropped; anything else is
refused naming trace_id."""

from __future__ import annotations

import pytest

from stacklens.traces.reads import trace_id_of
from stacklens.view_filters import BadFilter


def test_trace_ids_are_normalised() -> None:
    assert trace_id_of(" 0AF7651916CD43DD8448EB211C80319C ") == "0af7651916cd43dd8448eb211c80319c"
    assert trace_id_of("0af76519-16cd-43dd-8448-eb211c80319c") == "0af7651916cd43dd8448eb211c80319c"


@pytest.mark.parametrize("value", ["", "xyz", "0af7651916cd43dd8448eb211c80319", "0" * 32, "g" * 32])
def test_bad_trace_ids_are_refused(value: str) -> None:
    with pytest.raises(BadFilter) as caught:
        trace_id_of(value)
    assert caught.value.field == "trace_id"
