"""The delivery loop (`--record`): read complete lines, batch, deliver, and only then advance the tracker.

One thread does everything, in order, so a file's acknowledged ranges are always a contiguous prefix and
the bytes held in memory are the batch being built or sent (at most ``maxInflightBytes``). Batches that
cannot be delivered are never dropped: after the retries they are parked, reading pauses, and the cycle
restarts after ``parkDelay``.
"""

from __future__ import annotations

import collections
import logging
import os
import signal
import threading
import time
from typing import Any

from shipper import faults
from shipper.backoff import RETRIES, backoff_delay
from shipper.batch import Batch, pass_over_rejected, split_refused
from shipper.config import Config, ConfigError, load_config
from shipper.deadletters import DeadLetter, DeadLetterFile
from shipper.memory import peak_rss_mib
from shipper.state import Scanner
from shipper.status import STATUS_INTERVAL, publish, status_path
from shipper.tracker import TrackerStore, TrackerUnwritable
from shipper.transport import Answer, Outcome, Transport, network_error_name, retry_reason
from stacklens_contract.words import APPLICATION_NOT_FOUND, AUTHENTICATION_FAILED

log = logging.getLogger(__name__)
# Exit status when SIGTERM's grace period ends with a request unanswered (EX_TEMPFAIL, sysexits.h): the
# stop was not clean, yet nothing is lost: the batch is resent on the next start under the same
# Idempotency-Key and the service lands it once.
EXIT_UNACKNOWLEDGED = 75


class GraceExpired(Exception):
    """The shutdown grace period ended while a request was still out."""


class StartupError(Exception):
    """The shipper cannot start (message says why and what to do)."""


class Agent:
    def __init__(self, config: Config) -> None:
        self.config = config
        self.store = TrackerStore(config.tracker_path)
        self.scanner = Scanner(config, self.store)
        self.dead = DeadLetterFile(config.storage_path, config.max_dead_letter_bytes)
        self.transport = Transport(config)
        self.queue: collections.deque[Batch] = collections.deque()
        self.open: Batch | None = None
        self.wake = threading.Event()
        self.stopping = False
        self.reload = False
        self.blocked: str = ""  # "auth" / "app": waiting for a configuration fix
        self.park_until = 0.0
        self.not_before = 0.0  # the service's Retry-After: no batch goes before it, reload or not
        self.connected = False
        self.last_save = 0.0
        self.last_status = 0.0
        self.status_path = status_path(config)
        self.scanner.dirty = False

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

    # -- delivery ----------------------------------------------------------------------------------
    def _deliver(self) -> None:
        batch = self.queue[0]
        body = batch.body()
        if not body:
            self._acked(batch, None)
            return
        batch_id = batch.batch_id(body)
        answer = Answer(Outcome.RETRY, "not sent yet")
        for attempt in range(RETRIES + 1):
            if attempt:
                delay = backoff_delay(self.config, attempt, answer.retry_after)
                log.warning(
                    "Retry attempt %d/%d (%s; waiting %.1fs)", attempt, RETRIES, retry_reason(answer), delay
                )
                self.scanner.count("retries")
                if not self._wait_out(delay, answer.retry_after):
                    self._hold_for_retry_after(batch, answer.retry_after or 0.0)
                    return
            self._publish()
            answer = self.transport.send(body, batch_id)
            if answer.outcome is Outcome.OK:
                self._acked(batch, answer.body or {})
                return
            self.scanner.error(answer.message)
            if answer.outcome is Outcome.AUTH:
                log.error(
                    "%s: %s; fix apiKey in %s and send SIGHUP",
                    AUTHENTICATION_FAILED,
                    answer.message,
                    self.config.path,
                )
                self.blocked = "auth"
                return
            if answer.outcome is Outcome.APP and self._stale_app_keys(batch):
                # Every line names its own app key and none of them is the configured one: the service has
                # retired those keys (regenerated or revoked), so no config change can deliver these lines.
                # They go to the dead letters with file and offset (replayable), and the file moves on.
                log.error(
                    "%s: %d events carry an app key the service no longer knows (%s); passed over to %s",
                    APPLICATION_NOT_FOUND,
                    len(batch.lines),
                    answer.message,
                    self.dead.path,
                )
                batch.pass_over(f"refused by the service: {APPLICATION_NOT_FOUND} ({answer.message})")
                self._acked(batch, None)
                return
            if answer.outcome is Outcome.APP and self._mixed_app_keys(batch):
                # Some lines name their own app key and others rely on the configured one (or cannot be
                # read): which lines the service refuses is not known, so the batch is split; each line then
                # gets its own answer, and only a refusal of the configured key waits for a fix.
                split_refused(self.queue, batch, f"{APPLICATION_NOT_FOUND} ({answer.message})")
                return
            if answer.outcome is Outcome.APP:
                log.error(
                    "%s: %s; fix appKey in %s (use the application key) and send SIGHUP",
                    APPLICATION_NOT_FOUND,
                    answer.message,
                    self.config.path,
                )
                self.blocked = "app"
                return
            if answer.outcome in (Outcome.TOO_LARGE, Outcome.BAD_REQUEST):
                split_refused(self.queue, batch, answer.message)
                return
            if answer.outcome is Outcome.ENCODING:
                log.warning(
                    "the service refused %s bodies (%s); sending uncompressed",
                    self.transport.encoding,
                    answer.message,
                )
                self.transport.encoding = "identity"
                return
        park = max(self.config.park_delay, answer.retry_after or 0.0)  # never back before Retry-After
        self.park_until = time.monotonic() + park
        self.not_before = time.monotonic() + (answer.retry_after or 0.0)
        self.scanner.count("parked")
        self.scanner.set_state(f"parked after {RETRIES} retries: {answer.message}")
        log.error(
            "batch of %d events parked after %d retries (%s); nothing is dropped, trying again in %.0fs",
            len(batch.lines),
            RETRIES,
            answer.message,
            park,
        )

    def _wait_out(self, seconds: float, floor: float | None) -> bool:
        """Wait ``seconds`` before a resend; a SIGHUP does not cut it short. While stopping, a wait without a
        Retry-After shrinks to half a second (the grace period is for sending), and one whose Retry-After
        (``floor``) has not passed ends at once with False: the batch must not go before that."""
        self._publish(urgent=True)
        start = time.monotonic()
        deadline = start + seconds
        while (left := deadline - time.monotonic()) > 0:
            if self.stopping:
                if floor is not None and time.monotonic() - start < floor:
                    return False
                deadline = min(deadline, time.monotonic() + 0.5)
                left = deadline - time.monotonic()
            self.wake.wait(max(left, 0.0))
            self.wake.clear()
        return True

    def _hold_for_retry_after(self, batch: Batch, retry_after: float) -> None:
        """Stopping while the service's Retry-After runs: leave the batch on disk for the next start."""
        self.park_until = time.monotonic() + max(self.config.park_delay, retry_after)
        self.scanner.set_state(f"stopped within the service's Retry-After ({retry_after:g}s)")
        log.warning(
            "batch of %d events kept for the next start: the service asked for %gs (Retry-After) and the "
            "shipper is stopping; nothing is dropped",
            len(batch.lines),
            retry_after,
        )

    def _stale_app_keys(self, batch: Batch) -> bool:
        """True when every line carries its own app key and none is the configured ``appKey``."""
        keys = batch.own_app_keys()
        return bool(keys) and None not in keys and self.config.app_key not in keys

    def _mixed_app_keys(self, batch: Batch) -> bool:
        """True when the batch has several lines and some carry an app key other than the configured one."""
        keys = batch.own_app_keys()
        return len(batch.lines) > 1 and bool(keys - {None, self.config.app_key}) and len(keys) > 1

    def _acked(self, batch: Batch, answer: dict[str, Any] | None) -> None:
        faults.hit("after_ack")
        self.queue.popleft()
        if answer is not None:
            pass_over_rejected(batch, answer, self.dead.path)
        letters = [
            DeadLetter.of(batch.tail, item) for item in batch.items if item.data is None and item.problem
        ]
        appended = self.dead.append(letters)
        if letters:
            log.warning("%d lines passed over (see %s)", len(letters), self.dead.path)
        if appended.newly_full:
            log.error(
                "Dead letters full: %s has reached maxDeadLetterBytes (%d bytes); lines passed over from now on "
                "are counted (dead_letters_not_kept in --status) but not kept, until it is resent "
                "(stacklens-shipper --resend-dead-letters, once the cause is fixed) or moved away",
                self.dead.path,
                self.dead.max_bytes,
            )
        self.scanner.commit(batch, answer, appended.kept, appended.not_kept)
        if answer is not None:
            if not self.connected:
                self.connected = True
                log.info("Connected to stacklens")
            log.info("Batch sent: %d events", len(batch.lines))
            if self.config.verbose:
                log.debug(
                    "batch %s %s [%d, %d): accepted %s, duplicates %s, rejected %d",
                    answer.get("batch_id"),
                    batch.tail.path.name,
                    batch.start,
                    batch.end,
                    answer.get("accepted"),
                    answer.get("duplicates"),
                    len(answer.get("rejected") or []),
                )
        self.scanner.set_state("running")
        self._save()

    # -- tracker and configuration -----------------------------------------------------------------
    def _save(self, force: bool = False) -> None:
        """Write the tracker when forced, or when something changed and ``commitInterval`` has passed.

        Throttled because each generation costs two fsyncs; a crash in between only means a resend, which
        the Idempotency-Key and the service's event-id dedup turn into nothing.
        """
        now = time.monotonic()
        if not force and (not self.scanner.dirty or now - self.last_save < self.config.commit_interval):
            self._publish()
            return
        try:
            self.store.save(self.scanner.body())
            self.scanner.dirty = False
            self.last_save = now
        except OSError as exc:
            self.scanner.access_problem(str(self.store.path), f"cannot write the tracker ({exc.strerror})")
        self._publish(urgent=True)  # keep status.json at least as new as the tracker

    def _publish(self, urgent: bool = False) -> None:
        """Write ``status.json`` (no fsync) when figures changed: at most every STATUS_INTERVAL, or now."""
        now = time.monotonic()
        if not self.scanner.status_dirty and not (urgent and self.last_status < self.last_save):
            return
        if not urgent and now - self.last_status < STATUS_INTERVAL:
            return
        try:
            publish(self.status_path, self.scanner.body())
        except OSError as exc:  # a view only: the tracker's own write reports an unwritable directory
            log.debug("status.json not written: %s", exc.strerror)
            return
        self.scanner.status_dirty = False
        self.last_status = now

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
