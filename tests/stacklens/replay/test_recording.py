"""Reading one replay segment: compression told by the first bytes, truncated and corrupt bytes named,
secrets scrubbed (the bytes re-compressed only then), masked text kept as the SDK masked it."""

from __future__ import annotations

import gzip
import json
import zlib

import pytest

from stacklens.replay.recording import BadRecording, detect, event_ms, read_segment
from tests.stacklens.replay.recordings import snapshot

EVENTS = snapshot(1_795_000_000_000, title="*****", text="*** ****")


def test_gzip_zlib_and_json_are_told_apart_by_their_first_bytes() -> None:
    text = json.dumps(EVENTS).encode()
    assert detect(gzip.compress(text)) == "gzip"
    assert detect(zlib.compress(text)) == "zlib" and detect(zlib.compress(text, 9)) == "zlib"
    assert detect(text) == "json" and detect(b"  " + text) == "json"
    with pytest.raises(BadRecording, match="neither gzip, zlib nor JSON"):
        detect(b"\x00\x01\x02")


def test_untouched_segments_keep_their_bytes_and_plain_json_is_compressed_once() -> None:
    text = json.dumps(EVENTS).encode()
    for body in (zlib.compress(text), gzip.compress(text)):
        segment = read_segment(body)
        assert segment.stored is body and segment.events == EVENTS
    plain = read_segment(text)
    assert plain.encoding == "zlib" and json.loads(zlib.decompress(plain.stored)) == EVENTS
    assert "*****" in json.dumps(plain.events), "the SDK's masking is kept"


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (zlib.compress(json.dumps(EVENTS).encode())[:40], "truncated"),
        (gzip.compress(json.dumps(EVENTS).encode(), mtime=0)[:30], "truncated or corrupt"),
        (b"\x78\x9c" + b"\x00" * 20, "truncated or corrupt"),
        (zlib.compress(b'[{"type": 2}]'), "no numeric timestamp"),
        (zlib.compress(b"[]"), "no rrweb events"),
        (b"[1, 2", "not valid JSON"),
    ],
)
def test_bad_segments_say_what_is_wrong(body: bytes, words: str) -> None:
    with pytest.raises(BadRecording, match=words):
        read_segment(body)


def test_secrets_in_a_recording_are_scrubbed_and_the_segment_recompressed() -> None:
    token = "ghp_" + "a" * 36
    events = [*EVENTS, {"type": 3, "timestamp": 1_795_000_000_500, "data": {"source": 5, "text": token}}]
    body = zlib.compress(json.dumps(events).encode())
    segment = read_segment(body)
    assert segment.stored != body and token not in zlib.decompress(segment.stored).decode()
    assert segment.events[-1]["data"]["text"] == "[FILTERED]"


def test_the_sdk_custom_events_in_seconds_are_read_as_milliseconds() -> None:
    assert event_ms(1_795_401_922.9685) == pytest.approx(1_795_401_922_968.5)
    assert event_ms(1_795_401_923_570) == 1_795_401_923_570
