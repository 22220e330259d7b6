"""The shipper's delivery (:mod:`shipper.agent`): a batch sent and its answer acted on — acknowledged lines
advance the tracker, refused ones go to the dead letters, a retryable failure waits (backoff or the service's
Retry-After) and the batch is parked after the retries, never dropped."""

from __future__ import annotations

import logging
import time
from typing import Any

from shipper import faults
from shipper.agent_state import AgentState
from shipper.backoff import RETRIES, backoff_delay
from shipper.batch import Batch, pass_over_rejected, split_refused
from shipper.deadletters import DeadLetter
from shipper.transport import Answer, Outcome, retry_reason
from stacklens_contract.words import APPLICATION_NOT_FOUND, AUTHENTICATION_FAILED

log = logging.getLogger(__name__)


class Delivery(AgentState):
    """Sending batches and acting on the service's answers, over the delivery loop's state."""

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
