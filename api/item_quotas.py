"""The quotas an ingest entrance spends per request: the organization's, its projects' own and spike
protection (api/token_buckets.py), over the request's accepted items by project and category; and how a
refusal reads to a Sentry SDK (``X-Sentry-Rate-Limits``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from api.token_buckets import RateLimiter, SpikeRule
from stacklens.control.project_quotas import ProjectQuota, remembered_project_quota
from stacklens.errors import RateLimited
from stacklens.ingest.envelope_lines import EnvelopeLines
from stacklens.ingest.service import TakeItems
from stacklens.outcomes.counting import RATE_LIMIT_NAMES
from stacklens.outcomes.managed import GiveBack
from stacklens.settings import Settings


def item_taker(
    settings: Settings,
    limiter: RateLimiter,
    org_id: int,
    org_per_minute: int,
    known: Mapping[int, ProjectQuota] | None = None,
    *,
    spike_protection: bool = True,
) -> TakeItems:
    """The ``take_events`` of one request: projects whose quotas are not ``known`` (the DSN road reads its
    project's with the key) are read (remembered for a moment), only when the request has items of theirs.

    ``spike_protection`` off for the shipper's batches (`/api/ingest`): they carry history — a host
    catching up after an outage, a backfill — so their volume says nothing of a storm; their organization's
    and projects' quotas still hold. SDKs' own requests (envelopes, OTLP) are held to a multiple of their
    recent rate."""

    def take(counts: Counter[tuple[int, str]]) -> GiveBack | None:
        quotas = dict(known or {})
        for project_id in {project_id for project_id, _ in counts if project_id and project_id not in quotas}:
            quota = remembered_project_quota(settings, project_id)
            if quota is not None:
                quotas[project_id] = quota
        spike = SpikeRule.of(settings) if spike_protection else None
        return limiter.take_items(org_id, org_per_minute, counts, quotas, spike)

    return take


def rate_limits_header(refused: RateLimited) -> str:
    """``X-Sentry-Rate-Limits`` as Relay writes it: ``retry_after:categories:scope:reason_code``, the
    categories in the SDKs' names joined by ``;`` (none: every category), e.g.
    ``60:transaction:project:category_quota``."""
    names = ";".join(RATE_LIMIT_NAMES.get(c, c) for c in refused.categories)
    return f"{refused.retry_after}:{names}:{refused.scope}:{refused.reason}"


# Check-ins spend the quotas under Sentry's name for them (category ``monitor``, as the HTTP check-in does).
MONITOR_CATEGORY = "monitor"


def take_check_ins(take: TakeItems, project_id: int, lines: EnvelopeLines) -> GiveBack | None:
    """An envelope's check-ins' share of the quotas; what gives it back. Past a quota, an envelope of
    check-ins alone is refused (429 with ``X-Sentry-Rate-Limits``); the check-ins of an envelope with other
    items are dropped (``lines.check_ins`` emptied) and the rest goes on, as Relay drops one category."""
    try:
        return take(Counter({(project_id, MONITOR_CATEGORY): len(lines.check_ins)}))
    except RateLimited:
        if not (lines.written or lines.feedback or lines.attachments):
            raise
        lines.check_ins.clear()
        return None
