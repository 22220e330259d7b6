"""Build the marts once the demo's backfill has landed, instead of at the next scheduled tick.

The performance pages read tables the pipelines fill (one row per page load, hourly and daily states). The
server's start-up catch-up runs before the demo driver has sent its 35 days of history, and the scheduled
performance tick comes up to five minutes later: a first visit would find the pages nearly empty. So when the
driver writes its backfill marker, this prints the driver's report (what landed per kind, and loudly any day
that lost traffic), waits until the history is delivered — the shop's SDK writes the request sessions it holds
once a minute, so the last of them reach its log files up to a minute after the backfill; then the shipper
has to send every line of them (some 18,000 lines, 70 MB, in batches of 200: a minute or two) — then asks
the server to run every mart now, through the pipelines endpoint the server opened for local callers
(token in ``<data_dir>/pipelines_token``). A mart built before its history arrived would show part of it until
the next scheduled run: the release pages compared shop@1.1.0 with a shop@1.0.0 whose server sessions had not
landed yet, and called it a regression. A demo started again over kept data does nothing: its history is in
the marts already.
"""

from __future__ import annotations

import argparse
import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import httpx

from demo.annotations import annotate_deploys
from demo.backfill_report import read_report
from demo.merges import merge_demo_issues
from shipper.status import STATUS_NAME
from shipper.tracker import decode
from stacklens.server_link import ServerUnreachable, call_server, read_link
from stacklens.settings import Settings, get_settings

# sentry-python writes the request-mode session aggregates it holds once a minute (its SessionFlusher): the
# shop's last history sessions reach its log files up to a minute after the backfill; and a few seconds more.
DELIVERY_WAIT_S = 65.0
POLL_S = 2.0


def delivered(logs: Path) -> bool:
    """Whether the shipper has sent every byte of the log files in ``logs`` (the offsets its ``status.json``
    acknowledges, against the files' sizes now); True when there are no log files."""
    files = sorted(logs.glob("stacklens-*.log"))
    if not files:
        return True
    try:
        body = decode((logs / STATUS_NAME).read_bytes())
    except (OSError, ValueError):
        return False
    acknowledged: dict[str, int] = {}
    for entry in body["files"].values():
        if isinstance(entry, dict):
            acknowledged[str(entry.get("path"))] = int(entry.get("offset") or 0)
    try:
        return all(acknowledged.get(path.name, -1) >= path.stat().st_size for path in files)
    except OSError:
        return False


def build_when_backfilled(
    settings: Settings,
    marker: Path,
    say: Callable[[str], None],
    *,
    stop: threading.Event,
    delivery_wait_s: float = DELIVERY_WAIT_S,
    give_up_after_s: float = 900.0,
    logs: Path | None = None,
) -> bool:
    """Wait for ``marker``, then ``delivery_wait_s`` (the shop's last sessions written), then until the
    shipper has sent the log files in ``logs`` (default: ``logs`` beside the marker, where `stacklens up`
    keeps them), then run every mart once; whether it ran. Never raises."""
    deadline = time.monotonic() + give_up_after_s
    while not marker.exists():
        if stop.wait(1.0) or time.monotonic() > deadline:
            return False
    report = read_report(marker.parent)
    if report is None:
        say("  WARNING: the demo's traffic driver left no report of its history backfill (see traffic.log).")
    else:
        for line in report.lines():
            say(f"  {line}")
    if stop.wait(delivery_wait_s):
        return False
    logs = marker.parent / "logs" if logs is None else logs
    while not delivered(logs):
        if time.monotonic() > deadline:
            say("  The shipper has not sent all of the demo's history yet; the schedules build what arrives.")
            break
        if stop.wait(POLL_S):
            return False
    link = read_link(settings)
    if link is None:
        return False
    started = time.monotonic()
    try:
        outcomes = call_server(link, "POST", "/api/pipelines/run", {})["outcomes"]
    except (ServerUnreachable, RuntimeError, KeyError, TypeError) as exc:
        say(f"  The demo's history will reach the performance pages at the next scheduled run ({exc}).")
        return False
    failed = [o.get("job", "?") for o in outcomes if not o.get("success")]
    if failed:
        say(f"  Building the demo's history failed in {', '.join(failed)}; the schedules try again.")
        return False
    say(f"  The demo's history is in the performance pages ({time.monotonic() - started:.0f} s to build).")
    _through_the_api(say)
    return True


def _through_the_api(say: Callable[[str], None]) -> None:
    """What a team does by hand or from CI once the history is in: the demo's merge (demo.merges) and its
    deploy annotations (demo.annotations), through the API with the organization key `stacklens up` hands
    over."""
    url, key, project = (
        os.environ.get(n, "") for n in ("STACKLENS_URL", "STACKLENS_API_KEY", "STACKLENS_PROJECT")
    )
    if not (url and key and project):
        return
    with httpx.Client(base_url=url, timeout=120) as client:
        try:
            say(merge_demo_issues(client, key, project))
        except httpx.HTTPError as exc:
            say(f"  The demo's receipt issues were not merged ({exc}).")
        try:
            say(annotate_deploys(client, key, project))
        except httpx.HTTPError as exc:
            say(f"  The demo's deploys were not annotated ({exc}).")


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m demo.catch_up --marker PATH``: :func:`build_when_backfilled` on the console of
    `stacklens up`, which ends it (SIGTERM) when it stops. Nothing to do when an earlier start left the
    marker."""
    parser = argparse.ArgumentParser(prog="python -m demo.catch_up", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--marker", required=True, type=Path, help="the file the driver writes after its backfill"
    )
    args = parser.parse_args(argv)
    if args.marker.exists():
        return 0
    build_when_backfilled(
        get_settings(), args.marker, lambda line: print(line, flush=True), stop=threading.Event()
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
