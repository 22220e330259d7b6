"""The delivery loop (`--record`): read complete lines, batch, deliver, and only then advance the tracker.

One thread does everything, in order, so a file's acknowledged ranges are always a contiguous prefix and
the bytes held in memory are the batch being built or sent (at most ``maxInflightBytes``). Batches that
cannot be delivered are never dropped: after the retries they are parked, reading pauses, and the cycle
restarts after ``parkDelay``.
"""

from __future__ import annotations

import logging
import os
import signal
import time
from typing import Any

from shipper.batch import Batch
from shipper.config import Config, ConfigError, load_config
from shipper.delivery import Delivery
from shipper.memory import peak_rss_mib
from shipper.tracker import TrackerUnwritable
from shipper.transport import Transport, network_error_name
from stacklens_contract.words import AUTHENTICATION_FAILED

log = logging.getLogger(__name__)
# Exit status when SIGTERM's grace period ends with a request unanswered (EX_TEMPFAIL, sysexits.h): the
# stop was not clean, yet nothing is lost: the batch is resent on the next start under the same
# Idempotency-Key and the service lands it once.
EXIT_UNACKNOWLEDGED = 75


class GraceExpired(Exception):
    """The shutdown grace period ended while a request was still out."""


class StartupError(Exception):
    """The shipper cannot start (message says why and what to do)."""


class Agent(Delivery):
    """The delivery loop: signals, start, its steps and a reload, over the delivery (:mod:`shipper.delivery`)
    and its state (:mod:`shipper.agent_state`)."""

    # -- signals ---------------------------------------------------------------------------------
    def _on_stop(self, signum: int, _frame: Any) -> None:
        if not self.stopping:
            self.stopping = True
            signal.signal(signal.SIGALRM, self._on_alarm)
            signal.setitimer(signal.ITIMER_REAL, self.config.shutdown_grace)
        self.wake.set()

    def _on_alarm(self, _signum: int, _frame: Any) -> None:
        raise GraceExpired()

    def _on_hup(self, _signum: int, _frame: Any) -> None:
        self.reload = True
        self.wake.set()

    def _sleep(self, seconds: float) -> None:
        self._publish(urgent=True)  # whatever changed is visible to `--status` while we wait
        if seconds > 0:
            self.wake.wait(seconds)
        self.wake.clear()

    # -- start -------------------------------------------------------------------------------------
    def run(self) -> int:
        """The delivery loop until SIGTERM/SIGINT: 0 after a clean stop, :data:`EXIT_UNACKNOWLEDGED` when the
        grace period ended with a batch unanswered, 1 when the shipper cannot start."""
        log.info("Starting shipper...")
        status = 0
        started = False  # a shipper that never started has no tracker to save (and no second report)
        signal.signal(signal.SIGTERM, self._on_stop)
        signal.signal(signal.SIGINT, self._on_stop)
        signal.signal(signal.SIGHUP, self._on_hup)
        try:
            self._wait_for_storage()
            if self.stopping:
                return status
            self.scanner.load()
            started = True
            self._save(force=True)  # a recovered or re-read tracker is made durable before anything is sent
            self._check_connection()
            while not self.stopping:
                self._step()
            self._drain()
        except GraceExpired:
            status = EXIT_UNACKNOWLEDGED
            log.error(
                "Stopped with %d events unacknowledged after the %gs shutdown grace period; nothing is lost: "
                "they are sent again on the next start and the service drops the resend (same Idempotency-Key)",
                sum(len(batch.lines) for batch in self.queue) + (len(self.open.lines) if self.open else 0),
                self.config.shutdown_grace,
            )
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            self.scanner.set_state("stopped")
            if started:
                self._save(force=True)
            self.transport.close()
        log.info("Shipper stopped (peak RSS %.1f MiB)", peak_rss_mib())
        return status

    def _wait_for_storage(self) -> None:
        path = self.config.storage_path
        delay = 1.0
        while not path.is_dir() and not self.stopping:
            log.error("Storage path not found: %s does not exist; create it (mkdir -p %s)", path, path)
            self.scanner.set_state("waiting for storage path")
            self._sleep(delay)
            delay = min(delay * 2, 60.0)
        if self.stopping:
            return
        try:
            self.store.check_writable()
        except TrackerUnwritable as exc:
            raise StartupError(
                f"Storage path not accessible: cannot write {self.config.tracker_path.name} in {exc}; "
                "give the shipper user write access to the log directory (chown or chmod it)"
            ) from None

    def _check_connection(self) -> None:
        try:
            ok, detail = self.transport.verify()
        except Exception as exc:  # noqa: BLE001 - network trouble of any kind: delivery retries on its own
            log.warning("cannot reach %s: %s", self.config.base_url, network_error_name(exc))
            return
        if ok:
            self.connected = True
            log.info("Connected to stacklens (organization: %s)", detail)
        elif detail == AUTHENTICATION_FAILED:
            log.error(
                "%s: check apiKey in %s (the API key, not the application key)", detail, self.config.path
            )
        else:
            log.error("%s", detail)

    # -- loop --------------------------------------------------------------------------------------
    def _step(self) -> None:
        if self.reload:
            self._reload()
        now = time.monotonic()
        if self.blocked or now < self.park_until:
            self._save()
            self._sleep(max(0.0, self.park_until - now) if not self.blocked else self.config.park_delay)
            if self.blocked and not self.reload:
                self.blocked = ""  # try again now and then, in case the service side was fixed
            return
        if self.queue:
            self._deliver()
            return
        batch = self._fill()
        if batch is not None:
            self.queue.append(batch)
            return
        self._save(force=self.scanner.dirty)  # idle: nothing to read, so make the tracker current
        self._sleep(self.config.poll_interval)

    def _fill(self) -> Batch | None:
        """Read into the open batch; return it when it is full or due."""
        cfg = self.config
        self.scanner.scan()
        for tail in self.scanner.readable():
            if self.open is not None and self.open.tail is not tail:
                if self.open.items:
                    return self._take_open()  # a batch never spans two files
                self.open = None
            if self.open is None:
                self.open = Batch(tail, [])
            # Passed-over lines count too: they are held whole until the batch's dead letters are written.
            budget = max(cfg.max_inflight_bytes - self.open.held, 0)
            lines = tail.read_lines(cfg.batch_size - len(self.open.items), budget, cfg.max_line_bytes)
            self.open.add(lines)
            if len(self.open.items) >= cfg.batch_size or self.open.held >= cfg.max_inflight_bytes:
                return self._take_open()
            if tail.has_data() and not lines:
                continue
            if self.open.items and (tail.retired or self.scanner.newer_has_data(tail)):
                return self._take_open()
        if self.open is not None and self.open.items:
            if self.open.tail.retired:
                return self._take_open()
            if self.stopping or time.monotonic() - self.open.opened_at >= cfg.flush_interval:
                return self._take_open()
        return None

    def _take_open(self) -> Batch:
        batch, self.open = self.open, None
        assert batch is not None
        return batch

    def _drain(self) -> None:
        """SIGTERM/SIGINT: no new reading; send the open batch and what is queued, within the grace period."""
        if self.open is not None and self.open.items:
            self.queue.append(self._take_open())
        while self.queue and not self.blocked and time.monotonic() >= self.park_until:
            self._deliver()

    def _reload(self) -> None:
        self.reload = False
        try:
            config = load_config(self.config.path, require_storage=False)
        except ConfigError as exc:
            log.error("configuration not reloaded, keeping the running one: %s", "; ".join(exc.problems))
            return
        for warning in config.warnings:
            log.warning("%s", warning)
        self.transport.close()
        self.config = config
        self.scanner.config = config
        self.transport = Transport(config)
        self.blocked = ""
        self.park_until = self.not_before  # a parked batch goes again now, unless the service asked to wait
        log.info("configuration reloaded from %s", config.path)
        self._check_connection()


def run(config: Config) -> int:
    try:
        return Agent(config).run()
    except StartupError as exc:
        log.error("%s", exc)
        return 1
    finally:
        os.environ.pop("STACKLENS_SHIPPER_FAULT", None)
