"""The schedule runner's ticks, counted for the operators: three failed ticks in a row open the
``pipelines_failing`` episode (one alert), the next good tick closes it (one recovery note).

Three, because one failed tick is often a blip the next tick repairs (a watermark only advances on success,
so nothing is lost), while three in a row (three minutes or more of stale marts, budgets and alerts) is a
failure someone must look at.
"""

from __future__ import annotations

import logging

from stacklens.self_watch.episodes import firing_conditions, set_firing
from stacklens.settings import Settings

log = logging.getLogger(__name__)

FAILED_TICKS_TO_ALERT = 3


class PipelineTicks:
    """Counts failed ticks in a row; the runner calls :meth:`record` after each tick it evaluated."""

    def __init__(self, settings: Settings, failed_ticks_to_alert: int = FAILED_TICKS_TO_ALERT) -> None:
        self.settings = settings
        self.failed_ticks_to_alert = failed_ticks_to_alert
        self.failed_in_a_row = 0
        self._firing: bool | None = None

    def record(self, failures: list[str]) -> None:
        """One tick's failures (job names with their errors; empty: the tick succeeded). Never raises: the
        schedules go on whether or not the control store takes the episode."""
        try:
            self._record(failures)
        except Exception:  # telling the operators must not stop the schedules
            log.exception("pipelines: could not record the tick for the service's alerts")

    def _record(self, failures: list[str]) -> None:
        if self._firing is None:
            self._firing = "pipelines_failing" in firing_conditions(self.settings)
        if failures:
            self.failed_in_a_row += 1
            if self.failed_in_a_row >= self.failed_ticks_to_alert and not self._firing:
                detail = f"{self.failed_in_a_row} ticks failed in a row; the last: {'; '.join(failures)}"
                set_firing(self.settings, "pipelines_failing", True, detail[:500])
                self._firing = True
            return
        self.failed_in_a_row = 0
        if self._firing:
            set_firing(self.settings, "pipelines_failing", False, "a tick succeeded")
            self._firing = False
