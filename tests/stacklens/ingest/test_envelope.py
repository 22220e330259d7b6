"""Reading an envelope body within bounds: what a refused envelope held, as far as its item headers read.

An envelope's items becoming log lines is tested in test_envelope_lines.py."""

from __future__ import annotations

import json

import pytest

from stacklens.ingest.decode import DecodeError
from stacklens.ingest.envelope import item_kinds, parse_envelope


def test_a_refused_envelope_says_which_items_it_held_as_far_as_their_headers_read() -> None:
    """What the outcomes count for an envelope refused whole: each item whose header can be read (a length
    skips a payload holding line breaks), stopping at the first header that cannot."""
    payload = b'{"a":\n1}'
    body = b"\n".join(
        [
            json.dumps({"type": "event", "length": len(payload)}).encode(),
            payload,
            json.dumps({"type": "attachment"}).encode(),
            b"raw bytes to the end of the line",
            json.dumps({"type": "client_report"}).encode(),
            b"{}",
            b"{not json",
            json.dumps({"type": "transaction"}).encode(),
            b"{}",
        ]
    )
    assert item_kinds(body) == {"event": 1, "attachment": 1, "client_report": 1}
    assert item_kinds(b"") == {}
    # A log item counts its records as its header says (SDKs write item_count), at most one item's worth.
    logs = [json.dumps({"type": "log", "item_count": 7}).encode(), b'{"items": []}']
    assert item_kinds(b"\n".join(logs)) == {"log": 7}
    assert item_kinds(b"\n".join(logs * 300).replace(b'"item_count": 7', b'"item_count": 9999')) == {
        "log": 1000
    }
    assert item_kinds(b'{"type": "log", "item_count": "many"}\n{}') == {"log": 1}
    assert item_kinds(b'{"no": "type"}\n{}') == {}
    with pytest.raises(DecodeError):  # the same body refused by the reader
        parse_envelope(b"{}\n" + body)
