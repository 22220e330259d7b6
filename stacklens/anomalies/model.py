"""The expectation and band of hourly series: a seasonal median, scaled to the recent level, with a robust
spread (docs/alerts.md, "Anomaly rules"). Vectorised over many series at once with numpy.

For bucket ``i`` of a series ``x`` (hourly, UTC, NaN = a gap):

1. **seasonal baseline** ``b_i``: the median of the same hour in the previous weeks (weekly: up to 3 weeks)
   or days (daily: up to 7 days); ``none`` has no baseline (1);
2. **level** ``f_i``: the median, over the previous 12 hours (24 without seasonality), of how each hour
   compared with its own baseline (``(x + c) / (b + c)``, ``c`` = 1 for counts so empty night hours do not
   divide by zero) — a release that doubles LCP is learnt once half of those hours are at the new level;
3. **expected** ``e_i = (b_i + c) f_i - c``;
4. **spread**: each hour's residual ``z_j = (x_j - e_j) / s_j`` in its scale ``s`` (counts: √e, Poisson's
   own spread; other metrics: e, a relative deviation), and ``sigma_i = 1.4826 × median |z_j|`` over the
   previous 7 days (the MAD, as robust as a median: a few past spikes do not widen it), never below a
   floor (counts 1, Poisson; others 0.5 %);
5. **band** ``e_i ± k sigma_i s_i`` with ``k`` from the sensitivity; **score** ``z_i / sigma_i``.

A bucket without enough history is *learning* (no expected value, no band, never fires)."""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]

HOURS_DAY, HOURS_WEEK = 24, 168
# Seasonality → (period in hours, previous seasons looked at, of which at least this many must have data).
SEASONS = {"weekly": (HOURS_WEEK, 3, 1), "daily": (HOURS_DAY, 7, 3), "none": (0, 0, 0)}
# Hours of the level's median: a step change is learnt after half of them (6 h), a burst shorter than that
# moves it not at all. Without seasonality the median of the last day is the expectation itself.
LEVEL_HOURS = {"weekly": 12, "daily": 12, "none": 24}
SPREAD_HOURS = HOURS_WEEK  # the residuals the spread is the MAD of
MIN_RESIDUALS = 24  # fewer residuals than a day: learning
MAD_TO_SIGMA = 1.4826  # a normal distribution's sigma over its median absolute deviation
COUNT_FLOOR = 1.0  # Poisson: a count's residual in √expected units has a spread of at least 1
RELATIVE_FLOOR = 0.005  # other metrics: a spread of at least 0.5 % of the expected value
# "auto": weekly once a series has two weeks of data, daily once it has three days, else none.
AUTO_WEEKLY_HOURS, AUTO_DAILY_HOURS = HOURS_WEEK, 3 * HOURS_DAY
# Where the history a seasonality needs ends: the hours before the first evaluated bucket it reads.
LOOKBACK = {
    s: period * seasons + max(LEVEL_HOURS[s], SPREAD_HOURS) for s, (period, seasons, _) in SEASONS.items()
}
SEASONALITY_CODES = ("none", "daily", "weekly")  # Bands.seasonality holds indexes into this
CHUNK_ROWS = 250  # series judged together: 250 x 192 hours x 12 x 3 floats, about 14 MB a window array


@dataclass(frozen=True)
class Bands:
    """Per series and bucket (shape ``(series, buckets)``): expected, lower and upper edges, score (NaN:
    learning or a gap), spread and the seasonality used (an index into :data:`SEASONALITY_CODES`, -1:
    learning)."""

    expected: Array
    lower: Array
    upper: Array
    score: Array
    spread: Array  # sigma × scale: one unit of score in the metric's unit
    seasonality: NDArray[np.int8]

    @property
    def learning(self) -> NDArray[np.bool_]:
        return np.isnan(self.expected)


def nanmedian_last(a: Array) -> tuple[Array, NDArray[np.int64]]:
    """Median over the last axis ignoring NaN, and how many values it had (NaN where none): one sort, much
    faster than ``np.nanmedian`` on many short rows."""
    s = np.sort(a, axis=-1)  # NaN sort last
    n = np.sum(~np.isnan(a), axis=-1)
    lo = np.clip((n - 1) // 2, 0, None)
    hi = np.clip(n // 2, 0, None)
    low = np.take_along_axis(s, lo[..., None], axis=-1)[..., 0]
    high = np.take_along_axis(s, hi[..., None], axis=-1)[..., 0]
    med = (low + high) / 2.0
    return np.where(n > 0, med, np.nan), n


def _shift(x: Array, by: int) -> Array:
    """``x`` moved ``by`` buckets later along time (the first ``by`` buckets NaN)."""
    out = np.full(x.shape, np.nan)
    if by < x.shape[1]:
        out[:, by:] = x[:, : x.shape[1] - by]
    return out


def _windows(x: Array, size: int, start: int) -> Array:
    """For each bucket from ``start``, the ``size`` buckets before it: shape ``(series, buckets - start,
    size)`` (NaN before the series' beginning)."""
    padded = np.concatenate([np.full((x.shape[0], size), np.nan), x], axis=1)
    view = np.lib.stride_tricks.sliding_window_view(padded, size, axis=1)
    return view[:, start : x.shape[1], :]


def _seasonal_level(
    x: Array, period: int, seasons: int, needed: int, hours: int, first: int, c: float
) -> tuple[Array, Array]:
    """The level and the seasonal baseline of buckets ``first…``. Each bucket's baseline is the median of
    the seasons it has; the level compares the previous hours with their baselines only where those hours
    have *the same* seasons (a bit per season), so a season entering the median (the history's second week)
    does not look like a change of level. Until 6 hours have the new seasons, a bucket where a season has
    just entered compares itself without it: its baseline without its oldest season, and the level of the
    hours that had the seasons it keeps — so a change that ships in the hour a season enters is judged, not
    learnt unseen."""
    shifted = np.stack([_shift(x, period * (k + 1)) for k in range(seasons)], axis=-1)  # (rows, T, K)
    lo = max(0, first - hours)
    recent = shifted[:, lo:, :]
    whole, n = nanmedian_last(recent)
    present = ~np.isnan(recent)
    code = (present * (1 << np.arange(seasons))).sum(axis=-1).astype(np.float64)
    # The oldest season each bucket has (the last to enter), and the baseline and code without it.
    oldest = np.where(present.any(axis=-1), seasons - 1 - np.argmax(present[..., ::-1], axis=-1), -1)
    dropped = np.arange(seasons) == oldest[..., None]
    without, n_without = nanmedian_last(np.where(dropped, np.nan, recent))
    code_without = code - np.where(oldest >= 0, 2.0 ** np.maximum(oldest, 0), 0.0)

    def padded(a: Array) -> Array:
        return np.concatenate([np.full((x.shape[0], lo), np.nan), a], axis=1)

    whole, code, without, code_without = padded(whole), padded(code), padded(without), padded(code_without)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (_windows(x, hours, first) + c) / (_windows(whole, hours, first) + c)
    ratio = np.where(np.isfinite(ratio), ratio, np.nan)
    window_codes = _windows(code, hours, first)

    def level_of(codes: Array) -> Array:
        level, n_level = nanmedian_last(np.where(window_codes == codes[:, first:, None], ratio, np.nan))
        return np.where(n_level >= hours // 2, level, np.nan)

    level, level_without = level_of(code), level_of(code_without)
    base = np.where(n[:, first - lo :] >= needed, whole[:, first:], np.nan)
    base_without = np.where(n_without[:, first - lo :] >= needed, without[:, first:], np.nan)
    fallback = np.isnan(level) & ~np.isnan(level_without) & ~np.isnan(base_without)
    return np.where(fallback, level_without, level), np.where(fallback, base_without, base)


def _fit(x: Array, seasonality: str, counts: bool, start: int) -> tuple[Array, Array, Array]:
    """Expected value, residual scale and spread sigma of buckets ``start…`` (NaN: learning)."""
    period, seasons, needed = SEASONS[seasonality]
    c = 1.0 if counts else 0.0
    # Residuals are needed for the spread's 7 days before ``start``, and levels for the hours before those.
    first = max(0, start - SPREAD_HOURS)
    hours = LEVEL_HOURS[seasonality]
    if period:
        level, b = _seasonal_level(x, period, seasons, needed, hours, first, c)
    else:
        level, n_level = nanmedian_last(_windows(x, hours, first))
        level = np.where(n_level >= hours // 2, level, np.nan)
        b = np.ones_like(level)
    expected = (b + c) * level - c if period else level
    if counts:
        expected = np.maximum(expected, 0.0)
        scale = np.sqrt(np.maximum(expected, 1.0))
    else:
        scale = np.maximum(np.abs(expected), 1e-9)
    with np.errstate(invalid="ignore"):
        z = np.abs(x[:, first:] - expected) / scale
    offset = start - first
    spread, n_z = nanmedian_last(_windows(z, SPREAD_HOURS, offset))
    floor = COUNT_FLOOR if counts else RELATIVE_FLOOR
    sigma = np.where(n_z >= MIN_RESIDUALS, np.maximum(MAD_TO_SIGMA * spread, floor), np.nan)
    return expected[:, offset:], scale[:, offset:], sigma


def auto_choice(x: Array, start: int) -> NDArray[np.int8]:
    """Per series and bucket from ``start``, the seasonality "auto" uses (index into
    :data:`SEASONALITY_CODES`): weekly after two weeks of data, daily after three days, else none."""
    has = ~np.isnan(x)
    first = np.where(has.any(axis=1), np.argmax(has, axis=1), x.shape[1])
    age = np.arange(start, x.shape[1])[None, :] - first[:, None]
    return np.where(age >= AUTO_WEEKLY_HOURS, 2, np.where(age >= AUTO_DAILY_HOURS, 1, 0)).astype(np.int8)


def bands(x: Array, seasonality: str, k: float, counts: bool, start: int = 0) -> Bands:
    """The expectation, band and score of the buckets ``start…`` of every series (rows of ``x``)."""
    x = np.asarray(x, dtype=np.float64)
    if x.shape[0] > CHUNK_ROWS:  # the level's windows take rows x hours x 12 x 3 floats: a chunk at a time
        parts = [
            bands(x[r : r + CHUNK_ROWS], seasonality, k, counts, start) for r in range(0, len(x), CHUNK_ROWS)
        ]
        return Bands(*(np.concatenate([getattr(p, f.name) for p in parts]) for f in fields(Bands)))
    if seasonality == "auto":
        choice = auto_choice(x, start)
        shape = (x.shape[0], x.shape[1] - start)
        expected, scale, sigma = np.full(shape, np.nan), np.full(shape, np.nan), np.full(shape, np.nan)
        for code, name in enumerate(SEASONALITY_CODES):
            mask = choice == code
            if mask.any():
                rows = np.flatnonzero(mask.any(axis=1))
                e, s, g = _fit(x[rows], name, counts, start)
                sub = mask[rows]
                expected[rows] = np.where(sub, e, expected[rows])
                scale[rows] = np.where(sub, s, scale[rows])
                sigma[rows] = np.where(sub, g, sigma[rows])
    else:
        expected, scale, sigma = _fit(x, seasonality, counts, start)
        choice = np.full(expected.shape, SEASONALITY_CODES.index(seasonality), dtype=np.int8)
    learning = np.isnan(expected) | np.isnan(sigma)
    expected = np.where(learning, np.nan, expected)
    spread = sigma * scale
    width = k * spread
    lower = expected - width
    if counts:
        lower = np.maximum(lower, 0.0)
    with np.errstate(invalid="ignore"):
        score = (x[:, start:] - expected) / spread
    used = np.where(learning, -1, choice).astype(np.int8)
    return Bands(expected, lower, expected + width, score, spread, used)
