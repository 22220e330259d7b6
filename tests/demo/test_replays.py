"""The demo's replays read back through the real ingest code: segments with a full snapshot first, masked
text, the error named in the last replay event, and the error tagged with the replay's id."""

from __future__ import annotations

import random
import time
import zlib
from datetime import UTC, datetime

import orjson

from demo import browser
from demo import replays as replay_demo
from stacklens.ingest.envelope import parse_envelope
from stacklens.ingest.envelope_lines import envelope_lines
from stacklens.ingest.prepare import prepare_lines
from stacklens.ingest.prepared_rows import Attribution, BatchContext


def test_demo_replays_land_as_playable_segments() -> None:
    rng = random.Random(7)
    key = "stacklens_app_" + "a" * 24
    start_ms = int(time.time() * 1000) - 60_000
    events = replay_demo.session_events(rng, "http://shop.test", start_ms, 25)
    replay_id = replay_demo.new_replay_id("e" * 32)
    bodies = replay_demo.replay_envelopes(
        f"http://{key}@shop.test/1",
        replay_id,
        events,
        origin="http://shop.test",
        release="shop@1.0.0",
        environment="demo",
        user_agent=browser.USER_AGENTS["Firefox"],
        user_id="cust-1",
        error_ids=["e" * 32],
    )
    assert len(bodies) == 3, "ten-second segments"
    lines = b"\n".join(
        envelope_lines(parse_envelope(body), key, datetime.now(UTC)).lines for body in bodies
    ).split(b"\n")
    context = BatchContext(1, "batch", time.time(), None)
    prepared = prepare_lines(lines, 1, context, lambda _k: Attribution(1, None, 1))
    assert prepared.rejected == []
    segments = [orjson.loads(r[3]) for r in prepared.tables["replay_segments"]]
    assert [s["segment_id"] for s in segments] == [0, 1, 2]
    assert [s["has_full_snapshot"] for s in segments] == [1, 0, 0]
    replays = [orjson.loads(r[3]) for r in prepared.tables["replays"]]
    assert replays[-1]["error_ids"] == ["eeeeeeee-eeee-eeee-eeee-eeeeeeeeeeee"]
    assert replays[0]["browser_name"] == "Firefox" and replays[0]["user_id"] == "cust-1"
    snapshot = zlib.decompress(__import__("base64").b64decode(segments[0]["payload"]))
    assert b"Your cart" not in snapshot and b"**** ****" in snapshot, "text masked as the SDK masks it"
