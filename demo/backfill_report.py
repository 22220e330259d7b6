"""What the demo's history backfill did: what landed per kind and day, what was lost and why.

The driver prints it to the traffic log and writes it as JSON beside its backfill marker
(``<data_dir>/demo/backfill.json``); `stacklens up` reads that file and prints the same lines, so a day of
history that could not be sent is said where the user looks, not only in a log file.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from datetime import date
from pathlib import Path

from demo.delivery import (
    ATTEMPTS,
    BROWSER_SESSIONS,
    ERROR_ANSWERS,
    JS_ERRORS,
    MAIL_ERRORS,
    MAILS,
    PAGE_LOADS,
    REPLAYS,
    REQUESTS,
    SERVER_SESSIONS,
    VISITS,
    Tally,
)

REPORT_FILE = "backfill.json"


@dataclass(frozen=True)
class BackfillReport:
    days: list[str]  # the whole UTC days replayed, oldest first (ISO dates)
    today: str  # today's date: replayed up to the start of live traffic
    releases: tuple[str, str]  # the first and the last release of the history
    seconds: float
    totals: dict[str, int]  # kind -> landed
    page_loads_per_day: dict[str, int]  # every day of ``days`` and today
    lost: dict[str, dict[str, int]] = field(default_factory=dict)  # day -> kind -> lost
    reasons: dict[str, str] = field(default_factory=dict)  # day -> the first reason of its losses
    resent: int = 0  # requests the shop did not take at first, sent again
    # Release-health sessions sent, every day of ``days`` and today: browser page-load sessions plus the
    # shop's request sessions (absent from a report written before sessions were sent).
    sessions_per_day: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(
        cls, tally: Tally, days: list[date], today: date, releases: tuple[str, str], seconds: float
    ) -> BackfillReport:
        per_day = tally.per_day(PAGE_LOADS, [*days, today])
        browser = tally.per_day(BROWSER_SESSIONS, [*days, today])
        server = tally.per_day(SERVER_SESSIONS, [*days, today])
        return cls(
            [d.isoformat() for d in days],
            today.isoformat(),
            releases,
            round(seconds, 1),
            tally.totals(),
            {d.isoformat(): n for d, n in per_day.items()},
            {d.isoformat(): kinds for d, kinds in tally.lost_days().items()},
            {d.isoformat(): why for d, why in tally.reasons.items()},
            sessions_per_day={d.isoformat(): browser[d] + server[d] for d in [*days, today]},
        )

    def days_without_page_loads(self) -> list[str]:
        return [d for d in self.days if not self.page_loads_per_day.get(d)]

    @property
    def complete(self) -> bool:
        return not self.lost and not self.days_without_page_loads()

    def lines(self) -> list[str]:
        """The summary as printed: what landed per kind; then, loudly, every day that lost something."""
        t = self.totals
        whole = [self.page_loads_per_day.get(d, 0) for d in self.days]
        spread = f"{min(whole):,} to {max(whole):,} a day" if whole else "no whole day"
        out = [
            f"History: {len(self.days)} days ({self.days[0] if self.days else '-'} to "
            f"{self.days[-1] if self.days else '-'}) and today until now, {self.releases[0]} to "
            f"{self.releases[1]}, sent in {self.seconds:.0f} s:",
            f"  {t.get(PAGE_LOADS, 0):,} page loads ({spread}), {t.get(JS_ERRORS, 0):,} JavaScript errors, "
            f"{t.get(REPLAYS, 0):,} replays;",
            f"  {t.get(VISITS, 0):,} visits ({t.get(REQUESTS, 0):,} shop requests, {t.get(ERROR_ANSWERS, 0):,} "
            f"answered with an error); {t.get(MAILS, 0) + t.get(MAIL_ERRORS, 0):,} order mails "
            f"({t.get(MAIL_ERRORS, 0):,} failed, captured by the worker).",
        ]
        if self.sessions_per_day:
            daily = [self.sessions_per_day.get(d, 0) for d in self.days]
            sessions_spread = f"{min(daily):,} to {max(daily):,} a day" if daily else "no whole day"
            out.append(
                f"  {sum(self.sessions_per_day.values()):,} sessions ({sessions_spread}): "
                f"{t.get(BROWSER_SESSIONS, 0):,} browser page-load sessions, {t.get(SERVER_SESSIONS, 0):,} "
                "request sessions of the shop's server."
            )
        if self.resent:
            out.append(f"  {self.resent:,} requests the shop did not take at first were sent again.")
        if self.lost:
            out.append(
                f"  WARNING: the history is incomplete: the shop did not take these even after {ATTEMPTS} "
                "attempts each"
            )
            for day, kinds in sorted(self.lost.items()):
                what = ", ".join(f"{n:,} {kind}" for kind, n in kinds.items())
                out.append(f"  WARNING:   {day}: {what} lost ({self.reasons.get(day, 'no reason given')})")
        empty = self.days_without_page_loads()
        if empty:
            out.append(
                f"  WARNING: no page loads on {', '.join(empty)}: the performance charts have a gap there "
                "(the history is replayed only into a fresh data directory)."
            )
        return out

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1)

    @classmethod
    def from_json(cls, text: str) -> BackfillReport:
        data = json.loads(text)
        data["releases"] = tuple(data["releases"])
        return cls(**data)

    def write(self, directory: Path) -> Path:
        """Write the report into ``directory`` (atomically: a reader never sees half of it)."""
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / REPORT_FILE
        tmp = path.with_suffix(".tmp")
        tmp.write_text(self.to_json())
        os.replace(tmp, path)
        return path


def read_report(directory: Path) -> BackfillReport | None:
    """The report the driver wrote into ``directory``, or ``None`` (none yet, or unreadable)."""
    try:
        return BackfillReport.from_json((directory / REPORT_FILE).read_text())
    except (OSError, ValueError, TypeError, KeyError):
        return None
