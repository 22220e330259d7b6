"""`--resend-dead-letters`: send the dead letters again once their cause is fixed, each line landing once.

The lines go in batches (``batchSize``, ``maxInflightBytes``) under an Idempotency-Key derived from the
bytes and from which dead letters they are, with the number of times each was refused already
(docs/architecture.md §11.2:
the same bytes resent give the same key). Counting the refusals matters: the service remembers a key's first
answer for good, so a line refused again must go under a new key next time, or the fixed cause would still
meet the old refusal.

Exactly once across a crash rests on ``deadletter.journal`` beside the dead letters, an append-only file
synced after every entry:

- ``{"send": key, "ids": [...]}`` before a batch goes out;
- ``{"done": key, "landed": [...], "refused": {id: [reason, resends]}}`` once the service answered.

The dead-letter file is rewritten at the end of a run, finished or not (atomically: temporary file, fsync,
rename, directory fsync): landed lines are removed, refused ones carry the new reason. The journal is emptied
after that rewrite, unless a batch is left unanswered (the service unreachable after the retries). A run that
finds entries in the journal finishes the interrupted one first: its answered batches are applied, and a
batch sent without an answer goes again under its recorded key, so the service answers with its first
figures and lands nothing twice. Applying an entry twice gives the same file, so a crash between the rewrite
and the emptying is harmless.

The journal is also the lock: a second resend on the same directory is refused while one runs. The
delivery loop (`--record`) may keep running: it only appends to the dead letters, under their own lock.

The journal and the fates it records are :mod:`shipper.resend_journal`; here the run that uses them.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from shipper import faults
from shipper.backoff import RETRIES, backoff_delay
from shipper.config import Config
from shipper.deadletters import JOURNAL_NAME, DeadLetter, DeadLetterFile
from shipper.files import check_line
from shipper.resend_journal import Busy, Fates, Journal
from shipper.transport import Answer, Outcome, Transport, retry_reason
from stacklens_contract.words import APPLICATION_NOT_FOUND, AUTHENTICATION_FAILED

log = logging.getLogger(__name__)


def batch_key(letters: list[DeadLetter], body: bytes) -> str:
    """Same dead letters, same refusal counts, same bytes: same key."""
    h = hashlib.blake2b(digest_size=16)
    h.update(b"dead letters\0")
    for letter in letters:
        h.update(f"{letter.id}:{letter.resends}\n".encode())
    h.update(body)
    return h.hexdigest()


def body_of(letters: list[DeadLetter]) -> bytes:
    return b"".join((letter.line or b"") + b"\n" for letter in letters)


@dataclass
class Figures:
    landed: int = 0
    refused: int = 0
    not_resendable: int = 0
    unreadable: int = 0
    reasons: dict[str, int] = field(default_factory=dict)  # why lines could not be resent


class Resender:
    def __init__(self, config: Config) -> None:
        self.config = config
        self.dead = DeadLetterFile(config.storage_path, config.max_dead_letter_bytes)
        self.journal = Journal(config.storage_path / JOURNAL_NAME)
        self.transport = Transport(config)
        self.fates = Fates()
        self.figures = Figures()

    def run(self) -> int:
        """0 when every dead letter that can go was answered; 1 when the run could not finish."""
        try:
            self.journal.lock()
        except Busy:
            log.error(
                "another stacklens-shipper --resend-dead-letters is running on %s; wait for it to finish",
                self.config.storage_path,
            )
            return 1
        except OSError as exc:
            log.error(
                "Storage path not accessible: cannot write %s (%s); give the shipper user write access to the "
                "log directory",
                self.journal.path,
                exc.strerror,
            )
            return 1
        try:
            if not self._finish_interrupted():
                return 1
            letters, _ = self.dead.figures()
            if not letters:
                log.info("No dead letters to resend in %s", self.dead.path)
                return 0
            log.info("Resending the dead letters in %s", self.dead.path)
            done = self._resend_all()
            self._apply(finished=done)
            self._report(done)
            return 0 if done else 1
        finally:
            self.transport.close()
            self.journal.close()

    # -- an interrupted run ------------------------------------------------------------------------
    def _finish_interrupted(self) -> bool:
        entries = self.journal.entries()
        if not entries:
            return True
        sent: dict[str, list[str]] = {}
        answered: set[str] = set()
        for entry in entries:
            if isinstance(entry.get("send"), str):
                sent[entry["send"]] = [str(i) for i in entry.get("ids", [])]
            elif isinstance(entry.get("done"), str):
                answered.add(entry["done"])
                self.fates.record(entry)
        unanswered = {key: ids for key, ids in sent.items() if key not in answered}
        if unanswered:
            log.info(
                "Finishing an interrupted resend: %d batches sent without an answer go again under their "
                "Idempotency-Key (the service lands nothing twice)",
                len(unanswered),
            )
            wanted = {ident for ids in unanswered.values() for ident in ids}
            found: dict[str, DeadLetter] = {}
            for _raw, letter in self.dead.records():
                if letter is not None and letter.id in wanted:
                    found.setdefault(letter.id, letter)  # the first, as the batch was built from
            for key, ids in unanswered.items():
                letters = [found[i] for i in ids if i in found]
                if len(letters) != len(ids) or batch_key(letters, body_of(letters)) != key:
                    # Edited or removed by hand since: those bytes cannot be repeated. What is left goes in
                    # this run as new lines; the service drops event ids it already holds.
                    log.warning(
                        "an interrupted resend batch %s changed since; its lines go again as new", key
                    )
                    self.journal.append({"done": key})
                    continue
                if not self._send(letters, key):
                    self._apply(finished=False)
                    return False
        self._apply()
        return True

    # -- this run ------------------------------------------------------------------------------------
    def _letters(self) -> Iterator[DeadLetter]:
        for _raw, letter in self.dead.records():
            if letter is None:
                self.figures.unreadable += 1
                continue
            yield letter

    def _resend_all(self) -> bool:
        cfg = self.config
        seen: set[str] = set()
        batch: list[DeadLetter] = []
        size = 0
        for letter in self._letters():
            if letter.id in seen:
                continue  # the same line passed over twice is one dead letter
            seen.add(letter.id)
            why = self._cannot_go(letter)
            if why:
                self.figures.not_resendable += 1
                self.figures.reasons[why] = self.figures.reasons.get(why, 0) + 1
                continue
            line = letter.line or b""
            if batch and (len(batch) >= cfg.batch_size or size + len(line) + 1 > cfg.max_inflight_bytes):
                if not self._send(batch):
                    return False
                batch, size = [], 0
            batch.append(letter)
            size += len(line) + 1
        return not batch or self._send(batch)

    def _cannot_go(self, letter: DeadLetter) -> str:
        """Why a dead letter is not sent (kept as it is), or "" when it goes."""
        if letter.line is None:
            return "only its first 200 bytes were kept (longer than maxLineBytes)"
        checked = check_line(0, len(letter.line) + 1, letter.line + b"\n", self.config.max_line_bytes)
        if checked.data is None:
            return checked.problem or "a blank line"
        return ""

    def _send(self, letters: list[DeadLetter], key: str | None = None) -> bool:
        """Send one batch until the service answers it; False when the run has to stop."""
        body = body_of(letters)
        key = key or batch_key(letters, body)
        self.journal.append({"send": key, "ids": [letter.id for letter in letters]})
        answer = Answer(Outcome.RETRY, "not sent yet")
        attempt = 0
        while attempt <= RETRIES:
            if attempt:
                delay = backoff_delay(self.config, attempt, answer.retry_after)
                log.warning(
                    "Retry attempt %d/%d (%s; waiting %.1fs)", attempt, RETRIES, retry_reason(answer), delay
                )
                time.sleep(delay)
            answer = self.transport.send(body, key)
            attempt += 1
            if answer.outcome is Outcome.ENCODING and self.transport.encoding != "identity":
                log.warning(
                    "the service refused %s bodies (%s); sending uncompressed",
                    self.transport.encoding,
                    answer.message,
                )
                self.transport.encoding = "identity"
                attempt = 0  # the same bytes again, now in a form the service reads: not a retry
                answer = Answer(Outcome.RETRY, "not sent yet")
                continue
            if answer.outcome is Outcome.RETRY:
                continue
            return self._settle(key, letters, answer)
        log.error(
            "Dead letters not all resent: %s after %d retries; nothing is lost or landed twice: run "
            "--resend-dead-letters again later (the unanswered batch goes again under the same Idempotency-Key)",
            answer.message,
            RETRIES,
        )
        return False

    def _settle(self, key: str, letters: list[DeadLetter], answer: Answer) -> bool:
        """An answer that is not "try again later"; False when the run has to stop."""
        if answer.outcome is Outcome.OK:
            self._answered(key, letters, answer.body or {})
            log.info("Batch sent: %d events", len(letters))
            return True
        if answer.outcome is Outcome.AUTH:
            log.error(
                "%s: %s; fix apiKey in %s and run --resend-dead-letters again",
                AUTHENTICATION_FAILED,
                answer.message,
                self.config.path,
            )
            return False
        if answer.outcome is Outcome.APP:
            self._refused(key, letters, f"refused by the service: {APPLICATION_NOT_FOUND} ({answer.message})")
            return True
        # The body as a whole was refused (400/409/413/422, or 415 uncompressed): nothing of it landed.
        # Halves go under their own keys; a line refused alone stays a dead letter with the reason.
        if len(letters) == 1:
            self._refused(key, letters, f"refused by the service: {answer.message}")
            return True
        self.journal.append({"done": key})
        middle = len(letters) // 2
        return self._send(letters[:middle]) and self._send(letters[middle:])

    def _answered(self, key: str, letters: list[DeadLetter], answer: dict[str, Any]) -> None:
        """A 2xx: the lines listed under ``rejected`` (numbered from 1 in the body) stay, the rest landed."""
        refused: dict[str, str] = {}
        for entry in answer.get("rejected") or []:
            if not isinstance(entry, dict):
                continue
            number = entry.get("line")
            if isinstance(number, int) and not isinstance(number, bool) and 1 <= number <= len(letters):
                error = str(entry.get("error") or "no reason given")
                refused[letters[number - 1].id] = f"rejected by the service: {error}"
        landed = [letter.id for letter in letters if letter.id not in refused]
        again = {
            letter.id: (refused[letter.id], letter.resends + 1) for letter in letters if letter.id in refused
        }
        self._record(key, landed, again)

    def _refused(self, key: str, letters: list[DeadLetter], reason: str) -> None:
        self._record(key, [], {letter.id: (reason, letter.resends + 1) for letter in letters})

    def _record(self, key: str, landed: list[str], refused: dict[str, tuple[str, int]]) -> None:
        entry = {"done": key, "landed": landed, "refused": {k: list(v) for k, v in refused.items()}}
        self.journal.append(entry)
        faults.hit("after_resend_answer")
        self.fates.record(entry)
        self.figures.landed += len(landed)
        self.figures.refused += len(refused)

    def _apply(self, finished: bool = True) -> None:
        """Rewrite the dead letters with the fates so far; empty the journal when nothing is left unanswered
        (otherwise the next run needs its entries, and applying them again changes nothing)."""
        if self.fates:
            faults.hit("before_dead_letter_rewrite")
            self.dead.rewrite(self.fates.apply)
        if finished:
            self.journal.clear()
            self.fates = Fates()

    def _report(self, done: bool) -> None:
        f = self.figures
        left, _ = self.dead.figures()
        kept = "; ".join(f"{n} {why}" for why, n in sorted(f.reasons.items()))
        log.info(
            "Dead letters %s: %d landed, %d refused again (kept with the service's new reason), %d not "
            "resendable%s; %d left in %s",
            "resent" if done else "partly resent",
            f.landed,
            f.refused,
            f.not_resendable,
            f" ({kept})" if kept else "",
            left,
            self.dead.path,
        )
        if f.unreadable:
            log.warning(
                "%d records of %s could not be read and were left as they are", f.unreadable, self.dead.path
            )


def run(config: Config) -> int:
    try:
        return Resender(config).run()
    except OSError as exc:  # a full disk or a permission changed mid-run: the journal keeps what happened
        log.error(
            "Dead letters not all resent: %s (%s); nothing is lost or landed twice: run --resend-dead-letters "
            "again once that is fixed",
            exc.filename or "the log directory",
            exc.strerror or exc,
        )
        return 1
