"""One shipper batch from its body to landed rows: decode, prepare, limit, deduplicate, write.

Framework-free: the HTTP route authenticates; this module has the batch's lines prepared (in this thread or
by the ingest workers, :mod:`stacklens.ingest.prepare`) and lands them. Per-line problems go to
``rejected`` and never fail the batch (docs/architecture.md §11.2).
"""

from __future__ import annotations

import re
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from stacklens.blocking import WouldBlock, may_block
from stacklens.errors import ApplicationNotFound, InvalidInput, RateLimited, StackLensError
from stacklens.ingest import writer
from stacklens.ingest.batch_result import MAX_REJECTED_REPORTED as MAX_REJECTED_REPORTED
from stacklens.ingest.batch_result import BatchResult as BatchResult  # re-exported: the routes answer it
from stacklens.ingest.batch_result import IdempotencyKeyReused as IdempotencyKeyReused
from stacklens.ingest.batch_result import replayed
from stacklens.ingest.decode import body_digest, decode_body, decode_error, split_lines
from stacklens.ingest.front_door import FrontDoor, front_door
from stacklens.ingest.landing import Landing
from stacklens.ingest.prepare import prepare_lines, prepare_numbered
from stacklens.ingest.prepared_rows import Attribution as Attribution  # re-exported: `resolve` returns it
from stacklens.ingest.prepared_rows import BatchContext, OriginalFrames, Prepared
from stacklens.ingest.workers import (
    POOL_MIN_RAW_BYTES,
    AppKeyResolver,
    DecodeFailure,
    estimated_raw_bytes,
    pool_for,
)
from stacklens.outcomes.counting import INTERNAL, UNKNOWN_APP_KEY, UNREADABLE, Outcomes, accepted_counts
from stacklens.outcomes.managed import GiveBack, ManagedOutcomes
from stacklens.settings import Settings
from stacklens.sourcemaps.grouping import SourceMapGrouping
from stacklens.warehouse.client import get_warehouse
from stacklens_contract.words import APPLICATION_NOT_FOUND

# Starts preparing a batch (its context, and what gives original frames for grouping) and returns the call
# that waits for it.
Begin = Callable[[BatchContext, OriginalFrames], Callable[[], Prepared]]
# Spends the quotas of a request's accepted items, by (project id, category), or raises RateLimited; returns
# what gives them back (a request the door then refuses), or None when there is nothing to give back.
TakeItems = Callable[[Counter[tuple[int, str]]], GiveBack | None]

IDEMPOTENCY_KEY = re.compile(r"^[A-Za-z0-9_\-:.]{1,128}$")


def batch_id_for(idempotency_key: str | None) -> str:
    if idempotency_key is None:
        return uuid.uuid4().hex
    key = idempotency_key.strip()
    if not IDEMPOTENCY_KEY.match(key):
        raise InvalidInput("Idempotency-Key must be 1-128 characters of [A-Za-z0-9_-:.]")
    return key


def ingest_body(
    settings: Settings,
    org_id: int,
    body: bytes,
    content_encoding: str | None,
    *,
    header_app_key: str | None,
    idempotency_key: str | None,
    take_events: TakeItems,
) -> BatchResult:
    """Land one request body as received (compressed or not); raises :class:`DecodeError` for a bad body."""
    admitted = admit_body(
        settings,
        org_id,
        body,
        content_encoding,
        header_app_key=header_app_key,
        idempotency_key=idempotency_key,
        take_events=take_events,
    )
    return admitted if isinstance(admitted, BatchResult) else admitted.land()


def admit_body(
    settings: Settings,
    org_id: int,
    body: bytes,
    content_encoding: str | None,
    *,
    header_app_key: str | None,
    idempotency_key: str | None,
    take_events: TakeItems,
) -> BatchResult | Admitted:
    """One request body as received, prepared and within its quotas (:class:`Admitted`, not yet landed), or
    the answer it has already (a replay); raises :class:`DecodeError` for a bad body.

    Large bodies are prepared by the ingest worker processes (:mod:`stacklens.ingest.workers`), the rest
    in this thread; both land the same rows.
    """
    resolve = AppKeyResolver(settings, org_id)
    pool = pool_for(settings)

    def in_process(context: BatchContext, originals: OriginalFrames) -> Prepared:
        return prepare_body(decode_body(body, content_encoding), context, resolve, originals)

    def begin(context: BatchContext, originals: OriginalFrames) -> Callable[[], Prepared]:
        if pool is None or estimated_raw_bytes(body, content_encoding) < POOL_MIN_RAW_BYTES:
            return lambda: in_process(context, originals)
        may_block("the ingest worker processes")
        collect = pool.submit(body, content_encoding, context, resolve)

        def finish() -> Prepared:
            prepared = collect()
            if isinstance(prepared, DecodeFailure):
                raise decode_error(prepared.status, prepared.message)
            if prepared is None:
                return in_process(context, originals)
            if prepared.deferred:
                # Events whose source maps may give original frames: grouped here, where the maps are.
                prepared.merge(prepare_numbered(prepared.deferred, context, resolve, originals))
                prepared.deferred = []
            return prepared

        return finish

    return _admit(settings, org_id, idempotency_key, header_app_key, begin, take_events)


def ingest_batch(
    settings: Settings,
    org_id: int,
    data: bytes,
    *,
    header_app_key: str | None,
    idempotency_key: str | None,
    resolve: Callable[[str], Attribution | None],
    take_events: TakeItems,
    figures_answered: bool = True,
) -> BatchResult:
    """Land one decoded batch in this thread. ``take_events(counts)`` spends the quotas or raises;
    ``figures_answered``: see :func:`_admit`."""
    admitted = admit_batch(
        settings,
        org_id,
        data,
        header_app_key=header_app_key,
        idempotency_key=idempotency_key,
        resolve=resolve,
        take_events=take_events,
        figures_answered=figures_answered,
    )
    return admitted if isinstance(admitted, BatchResult) else admitted.land()


def admit_batch(
    settings: Settings,
    org_id: int,
    data: bytes,
    *,
    header_app_key: str | None,
    idempotency_key: str | None,
    resolve: Callable[[str], Attribution | None],
    take_events: TakeItems,
    figures_answered: bool = True,
    also: Outcomes | None = None,
) -> BatchResult | Admitted:
    """One decoded batch prepared in this thread and within its quotas, not yet landed (:class:`Admitted`),
    or the answer it has already (a replay). ``also``: items of the request counted beside its lines, whose
    outcome follows the request's (an envelope's attachments; :class:`ManagedOutcomes`)."""
    return _admit(
        settings,
        org_id,
        idempotency_key,
        header_app_key,
        # An envelope's key is already its lines' own digest (EnvelopeLines.idempotency_key): no resend under
        # it can carry other lines, so its record keeps no second digest ('' is never a conflict).
        lambda context, originals: (
            lambda: prepare_body(data, context, resolve, originals, digest=figures_answered)
        ),
        take_events,
        figures_answered=figures_answered,
        also=also,
    )


def prepare_body(
    data: bytes,
    context: BatchContext,
    resolve: Callable[[str], Attribution | None],
    originals: OriginalFrames | None = None,
    digest: bool = True,
) -> Prepared:
    """A whole decoded body prepared in this thread, with its digest (for Idempotency-Key conflicts) unless
    ``digest`` is false."""
    prepared = prepare_lines(split_lines(data), 1, context, resolve, originals)
    if digest:
        prepared.body_hash = body_digest(data)
    return prepared


def _admit(
    settings: Settings,
    org_id: int,
    idempotency_key: str | None,
    header_app_key: str | None,
    begin: Begin,
    take_events: TakeItems,
    *,
    figures_answered: bool = True,
    also: Outcomes | None = None,
) -> BatchResult | Admitted:
    """``begin(context, originals)`` starts preparing the batch (in this thread or the worker processes) and
    returns the call that waits for it.

    The organization's source-map index (cached in the process) rides in the context, so events that may
    have a map are grouped by their original frames (:mod:`stacklens.sourcemaps.grouping`). The prepared rows
    land through the front door (:mod:`stacklens.ingest.front_door`), together with other requests' rows.

    ``figures_answered``: the answer reports accepted and duplicate counts (`/api/ingest`, OTLP): a keyed
    batch is looked up by the front door's accept group before its quota is spent there (a shipper's resent
    batch costs no quota) and its rows are checked for duplicates before the answer. An envelope's answer is
    its event id whatever happened: its resend is found by its event id, and its rows are checked by the
    front door's drain (one look-up for many requests)."""
    batch_id = batch_id_for(idempotency_key)
    client = get_warehouse(settings)
    received = time.time()
    maps = SourceMapGrouping(client, org_id)
    context = BatchContext(
        org_id,
        batch_id,
        received,
        header_app_key,
        settings.retention_days,
        maps.index(),
        settings.log_retention_days,
    )
    prepared = begin(context, maps)()
    keyed = idempotency_key is not None and figures_answered
    result = BatchResult(batch_id, skipped=prepared.skipped, rejected=prepared.rejected)
    result.rejected.sort(key=lambda r: r["line"])
    refusal = _refusal(prepared, result)
    if refusal is not None:
        # A resend of a batch that landed is answered as the first time, even when its lines no longer pass
        # (its app key revoked since): the look-up the accepted path leaves to the front door, done here on
        # this rare path.
        reason = UNKNOWN_APP_KEY if isinstance(refusal, ApplicationNotFound) else UNREADABLE
        whole = ManagedOutcomes(settings, org_id, prepared.outcomes, also)
        try:
            landed = writer.find_batch(client, org_id, batch_id) if keyed else None
        except WouldBlock:
            whole.forget()  # nothing took effect: the admission runs again on a thread
            raise
        except Exception:  # the warehouse did not answer (503): the items are counted as refused all the same
            whole.refuse("invalid", reason)
            raise
        if landed is not None:
            whole.forget()  # counted when the batch first landed
            return replayed(landed, prepared.body_hash)
        whole.refuse("invalid", reason)
        raise refusal
    counts = accepted_counts(prepared.outcomes)
    # From here the request's outcomes are resolved exactly once, whatever happens to it (see
    # stacklens.outcomes.managed): refused here, or by the landing's end in the front door.
    outcomes = ManagedOutcomes(settings, org_id, prepared.outcomes, also)

    def take() -> None:
        outcomes.give_back = take_events(counts)

    landing = Landing(org_id, batch_id, keyed, prepared, received, result, counts_duplicates=figures_answered)
    landing.outcomes = outcomes
    if keyed:
        # A keyed batch spends its quotas in the front door's accept group, once its replay look-up (one
        # for the whole group) found no earlier landing: a resent batch costs no quota, and a request pays no
        # warehouse look-up of its own. A refusal there is resolved with the landing.
        landing.take = take
    else:
        try:
            take()
        except WouldBlock:
            outcomes.forget()  # nothing took effect: the admission runs again on a thread
            raise
        except RateLimited as refused:
            outcomes.refuse("rate_limited", refused.reason)
            raise
        except Exception:
            outcomes.refuse("invalid", INTERNAL)  # the quotas could not be read (Redis down: 503)
            raise
    return Admitted(settings, landing)


def _refusal(prepared: Prepared, result: BatchResult) -> StackLensError | None:
    """Why the batch is refused as a whole (no line belongs to the organization, or none could be read);
    ``None`` when some line lands."""
    # Refused for mixed reasons (an unknown app key and lines that cannot be read) is a 400, not a 404: a
    # 404 reads "fix the configured app key", and a shipper waited on it for ever while the rest of its file
    # stayed unsent; a 400 makes a sender split the batch and learn each line's own answer.
    unreadable = [r for r in result.rejected if not str(r["error"]).startswith(APPLICATION_NOT_FOUND)]
    if prepared.stored and not prepared.attributed and not unreadable:
        return ApplicationNotFound(
            "no line of the batch belongs to a project of this "
            "organization; check the app key (stacklens_app_…), not the API key"
        )
    if not prepared.attributed and not result.skipped and result.rejected:
        unreadable.sort(key=lambda r: r["line"])
        first = unreadable[0] if unreadable else result.rejected[0]
        unknown = (
            f" ({prepared.stored} other line(s) carry an app key this organization does not have)"
            if prepared.stored
            else ""
        )
        return InvalidInput(
            f"no line of the batch could be read{unknown}; line {first['line']}: {first['error']}"
        )
    return None


@dataclass
class Admitted:
    """A batch prepared and within its quotas, to hand to the front door: :meth:`land` waits in this thread,
    :meth:`submit` leaves the wait to the caller (an event loop awaits ``landing.on_done``)."""

    settings: Settings
    landing: Landing

    def land(self) -> BatchResult:
        front_door(self.settings).land(self.landing)  # waits in this thread; raises the refusal it met
        return self.answer()

    def submit(self, on_done: Callable[[], None] | None = None, *, wake: bool = True) -> FrontDoor:
        """Hand the rows to the front door; ``on_done`` is called (in the thread that accepts them) once it
        took them. ``wake=False``: see :meth:`FrontDoor.submit`. The door, for its ``accept_here``."""
        self.landing.on_done = on_done
        door = front_door(self.settings)
        door.submit(self.landing, wake=wake)
        return door

    def answer(self) -> BatchResult:
        """The answer once the landing is done (or its refusal). Its outcomes were resolved by the landing's
        end, whether or not anybody waited for it (stacklens.outcomes.managed)."""
        return self.landing.answer()
