"""Cluster bootstrap for the report's intervals and paired comparisons.

VirtueBench asks several questions about one video, and at one level they share the same frames, so
items are not independent: the unit resampled is the video (a cluster), as in a cluster bootstrap
(Davison & Hinkley 1997, sec. 3.8). Each number is resampled over its own videos (the standard cluster
bootstrap of its items: as many videos as it has, drawn with replacement, every item of a drawn video kept);
numbers over the same videos share the same resamples, so the same digits come back on every rerun and a
paired comparison's arms move together. Intervals are BCa percentile intervals (Efron & Tibshirani 1993,
ch. 14); a paired comparison's p-value comes from a randomization test over videos (paired_difference says
why; virtuebench.support.paired computes it).

Where the resamples cannot show the uncertainty (every item right, or every item wrong, one video, or fewer
than MIN_DISTINCT distinct resample values) the percentile interval would collapse to a point. There the
interval is a closed form on the design-effect-adjusted number of items, n / (1 + (m - 1) rho), with m the mean
items per video and rho the intra-video correlation of the values concerned (`intra_cluster_correlation`):
- a share (accuracy): Clopper-Pearson at 0 or 1, Wilson elsewhere (`fallback_interval`);
- a bounded mean (the trust score, three-valued): Agresti-Coull-type on the values' own variance
  (`bounded_mean_fallback`);
- a paired difference of two 0/1 arms: Bonett-Price's adjusted Wald interval (`paired_fallback`).
Each interval says which method made it (`Interval.method`; results/scores.csv's `ci_method` and
`trust_ci_method`, results/comparisons.csv's `ci_method`). benchmarks/bench_coverage.py measures the coverage
(docs/statistics.md).
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from virtuebench.support.paired import PValue, SignFlipTest, sign_flip_test

NORMAL = NormalDist()

CONFIDENCE = 0.95  # results/scores.csv's intervals are 95% (docs/contract.md)
#: Fewer distinct resample values than this and the percentile interval is too coarse to trust: the fallback.
MIN_DISTINCT = 10


@dataclass(frozen=True)
class Interval:
    low: float | None
    high: float | None
    # "bca", "clopper-pearson-deff", "wilson-deff", "agresti-coull-deff", "bonett-price-deff", or "none" (no item)
    method: str


def intra_cluster_correlation(groups: Iterable[tuple[Sequence[Hashable], Sequence[float]]]) -> float:
    """The one-way ANOVA estimate of the intra-cluster correlation, pooled over `groups` (each a list of clusters
    and the values of its items), clipped to [0, 1]; 0 where it cannot be estimated."""
    ssb = ssw = df_b = df_w = m0_sum = 0.0
    for clusters, values in groups:
        by: dict[Hashable, list[float]] = {}
        for cluster, value in zip(clusters, values):
            by.setdefault(cluster, []).append(float(value))
        k, n = len(by), sum(len(v) for v in by.values())
        if k < 2 or n <= k:
            continue
        mean = sum(sum(v) for v in by.values()) / n
        ssb += sum(len(v) * (sum(v) / len(v) - mean) ** 2 for v in by.values())
        ssw += sum((x - sum(v) / len(v)) ** 2 for v in by.values() for x in v)
        df_b, df_w = df_b + k - 1, df_w + n - k
        m0_sum += n - sum(len(v) ** 2 for v in by.values()) / n
    if df_b == 0 or df_w == 0:
        return 0.0
    msb, msw, m0 = ssb / df_b, ssw / df_w, m0_sum / df_b
    if msb + (m0 - 1) * msw <= 0:
        return 0.0
    return float(min(1.0, max(0.0, (msb - msw) / (msb + (m0 - 1) * msw))))


def effective_items(n_items: int, n_clusters: int, rho: float) -> float:
    """The design-effect-adjusted number of items: n / (1 + (m - 1) rho), m the mean items per cluster (Kish)."""
    deff = 1 + max(0.0, n_items / max(n_clusters, 1) - 1) * rho
    return max(1.0, n_items / deff)


def fallback_interval(share: float, n_items: int, n_clusters: int, rho: float, confidence: float = CONFIDENCE) -> Interval:
    """An interval for a share in [0, 1] on the design-effect-adjusted number of items: Clopper-Pearson at 0 or
    1 (closed form), Wilson elsewhere."""
    n_eff = effective_items(n_items, n_clusters, rho)
    alpha = 1 - confidence
    if share >= 1:
        return Interval((alpha / 2) ** (1 / n_eff), 1.0, "clopper-pearson-deff")
    if share <= 0:
        return Interval(0.0, 1 - (alpha / 2) ** (1 / n_eff), "clopper-pearson-deff")
    z = NORMAL.inv_cdf(1 - alpha / 2)
    centre = (share + z * z / (2 * n_eff)) / (1 + z * z / n_eff)
    half = z * (share * (1 - share) / n_eff + z * z / (4 * n_eff * n_eff)) ** 0.5 / (1 + z * z / n_eff)
    return Interval(max(0.0, centre - half), min(1.0, centre + half), "wilson-deff")


def bounded_mean_fallback(
    values: Sequence[float], bounds: tuple[float, float], n_clusters: int, rho: float, confidence: float = CONFIDENCE
) -> Interval:
    """An interval for the mean of values within `bounds` (the trust score: three values), Agresti-Coull-type:
    z^2/2 pseudo-items at each bound join the n_eff (design-effect-adjusted) items, and the interval is the
    augmented mean +- z times its standard error from the augmented values' own variance, clipped to `bounds`.
    For values only at the bounds it is Agresti & Coull's (1998) interval for a proportion; the pseudo-items
    keep it from collapsing where every value is the same, and the values' own variance keeps it narrower than
    a binary interval where they lie between the bounds."""
    lo, hi = bounds
    observed = np.asarray(values, dtype=float)
    n_eff = effective_items(len(observed), n_clusters, rho)
    z = NORMAL.inv_cdf(1 - (1 - confidence) / 2)
    pseudo = z * z / 2  # at each bound
    total = n_eff + 2 * pseudo
    mean = (n_eff * observed.mean() + pseudo * (lo + hi)) / total
    second_moment = (n_eff * float(np.mean((observed - mean) ** 2)) + pseudo * ((lo - mean) ** 2 + (hi - mean) ** 2)) / total
    half = z * (second_moment / total) ** 0.5
    return Interval(max(lo, mean - half), min(hi, mean + half), "agresti-coull-deff")


def paired_fallback(a: Sequence[float], b: Sequence[float], n_clusters: int, rho: float, confidence: float = CONFIDENCE) -> Interval:
    """An interval for mean(a) - mean(b) of paired 0/1 arms: Bonett & Price's (2012) adjusted Wald interval (one
    pseudo-item added to each discordant cell), on design-effect-adjusted counts (rho: the intra-video
    correlation of the differences). Recommended for paired proportions by Fagerland, Lydersen & Laake (2014);
    it has positive width even where no item is discordant."""
    first, second = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if not np.all(np.isin(first, (0.0, 1.0))) or not np.all(np.isin(second, (0.0, 1.0))):
        raise ValueError("paired_fallback needs 0/1 arms (correct or not per item)")
    n_eff = effective_items(len(first), n_clusters, rho)
    scale = n_eff / len(first)
    only_a = scale * float(np.sum(first > second))
    only_b = scale * float(np.sum(first < second))
    share_a, share_b = (only_a + 1) / (n_eff + 2), (only_b + 1) / (n_eff + 2)
    difference = share_a - share_b
    z = NORMAL.inv_cdf(1 - (1 - confidence) / 2)
    half = z * ((share_a + share_b - difference**2) / (n_eff + 2)) ** 0.5
    return Interval(max(-1.0, difference - half), min(1.0, difference + half), "bonett-price-deff")


@dataclass(frozen=True)
class Bootstrap:
    """Settings: `resamples` per number and the base `seed` (config `report.bootstrap`)."""

    resamples: int = 2000
    seed: int = 0

    def __post_init__(self) -> None:
        if self.resamples < 1:
            raise ValueError(f"report.bootstrap.resamples must be at least 1, got {self.resamples}")

    def rng(self, key: Sequence[Hashable]) -> np.random.Generator:
        digest = hashlib.sha256(repr((self.seed, *key)).encode()).digest()
        return np.random.default_rng([self.seed, int.from_bytes(digest[:8], "little")])

    def weights(self, n_clusters: int, key: Sequence[Hashable]) -> np.ndarray:
        """How often each cluster is drawn in each resample: (resamples, n_clusters) counts."""
        if n_clusters == 0:
            return np.zeros((self.resamples, 0))
        return self.rng(key).multinomial(n_clusters, np.full(n_clusters, 1 / n_clusters), size=self.resamples)


def bca_interval(
    samples: np.ndarray, estimate: float, counts: np.ndarray, sums: np.ndarray, confidence: float = CONFIDENCE
) -> tuple[float | None, float | None]:
    """Bias-corrected and accelerated percentile interval (Efron & Tibshirani 1993, ch. 14) of a ratio
    sum/count over clusters; the acceleration from the delete-one-cluster jackknife. None, None with
    fewer than two clusters: one video says nothing about how results vary between videos."""
    if len(counts) < 2:
        return None, None
    n = len(samples)
    below = (np.count_nonzero(samples < estimate) + 0.5 * np.count_nonzero(samples == estimate)) / n
    z0 = NORMAL.inv_cdf(min(max(below, 1 / (n + 1)), n / (n + 1)))
    with np.errstate(invalid="ignore", divide="ignore"):
        jackknife = (sums.sum() - sums) / (counts.sum() - counts)
    jackknife = jackknife[np.isfinite(jackknife)]
    spread = jackknife.mean() - jackknife
    denominator = 6 * float(spread @ spread) ** 1.5
    acceleration = float((spread**3).sum()) / denominator if denominator > 0 else 0.0
    percents = []
    for tail in ((1 - confidence) / 2, (1 + confidence) / 2):
        z = z0 + NORMAL.inv_cdf(tail)
        percents.append(100 * NORMAL.cdf(z0 + z / (1 - acceleration * z)))
    low, high = np.percentile(samples, percents)
    return float(low), float(high)


class Resampler:
    """The bootstrap resamples of a judge's numbers: each number is resampled over its own videos (the standard
    cluster bootstrap of its items), the resamples seeded by the set of videos, so numbers over the same videos
    share them (at paper scale, 901 videos and 1,500 numbers, a few distinct video sets). `rho`: the benchmark's
    intra-video correlation of the values resampled (correctness for scores, the paired differences for
    comparisons), for the fallback interval (module docstring); `interval` takes another for other values."""

    def __init__(self, universe: Iterable[Hashable], settings: Bootstrap, key: Sequence[Hashable], rho: float = 0.0) -> None:
        self.universe = set(universe)
        self.settings, self.key, self.rho = settings, tuple(key), rho
        self._weights: dict[tuple[Hashable, ...], np.ndarray] = {}

    def _own(self, clusters: Sequence[Hashable], values: Sequence[float]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The number's own videos: per video its item count and value sum, and the resample weights."""
        unknown = next((cluster for cluster in clusters if cluster not in self.universe), None)
        if unknown is not None:
            raise ValueError(f"cluster {unknown!r} is not in the resampled universe")
        order = tuple(sorted(set(clusters), key=repr))
        index = {cluster: i for i, cluster in enumerate(order)}
        at = np.array([index[cluster] for cluster in clusters], dtype=np.int64)
        counts = np.bincount(at, minlength=len(order)).astype(float)
        sums = np.bincount(at, weights=np.asarray(values, dtype=float), minlength=len(order))
        if order not in self._weights:
            digest = hashlib.sha256(repr(order).encode()).hexdigest()[:16]
            # kept small (paper scale: about 30 video sets of up to 901 videos, 3.6 MB each as uint16)
            self._weights[order] = self.settings.weights(len(order), (*self.key, digest)).astype(
                np.uint16 if len(order) < 65536 else np.int32
            )
        return counts, sums, self._weights[order].astype(float)

    def interval(
        self, clusters: Sequence[Hashable], values: Sequence[float], bounds: tuple[float, float] | None = None, rho: float | None = None
    ) -> Interval:
        """95% interval of the mean of `values` (one per item, its video in `clusters`): BCa, or the fallback where
        the resamples cannot show the uncertainty (module docstring). `bounds`: None for 0/1 values (a share);
        else the range the values lie in (a bounded mean). `rho`: the values' intra-video correlation, if not the
        resampler's."""
        if len(values) == 0:
            return Interval(None, None, "none")
        counts, sums, weights = self._own(clusters, values)
        estimate = float(sums.sum() / counts.sum())
        found = _bca_if_resamples_vary(estimate, counts, sums, weights)
        if found is not None:
            return found
        rho = self.rho if rho is None else rho
        if bounds is None:
            return fallback_interval(min(1.0, max(0.0, estimate)), int(counts.sum()), len(counts), rho)
        return bounded_mean_fallback(values, bounds, len(counts), rho)

    def mean_interval(self, clusters: Sequence[Hashable], values: Sequence[float]) -> tuple[float | None, float | None]:
        """95% interval of the mean of 0/1 `values` (see `interval`)."""
        found = self.interval(clusters, values)
        return found.low, found.high

    def paired(
        self,
        clusters: Sequence[Hashable],
        a: Sequence[float],
        b: Sequence[float],
        key: Sequence[Hashable],
        p_value: PValue = "conventional",
    ) -> Paired:
        """See paired_difference; `key` seeds the randomization test where it samples, `p_value` its definition."""
        if len(a) != len(b) or len(a) != len(clusters):
            raise ValueError(f"paired values differ in length: {len(clusters)} clusters, {len(a)} and {len(b)} values")
        diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
        if len(diff) == 0:
            return Paired(float("nan"), None, None, None, 0, 0, "none")
        counts, sums, weights = self._own(clusters, diff)
        total = counts.sum()
        observed = float(sums.sum() / total)
        n_clusters = len(counts)
        interval = self._paired_interval(a, b, observed, counts, sums, weights)
        test = sign_flip_test(sums, self.settings.rng((*key, "randomization")), p_value)
        return Paired(observed, interval.low, interval.high, test.p_value, int(total), n_clusters, interval.method, test)

    def _paired_interval(
        self, a: Sequence[float], b: Sequence[float], observed: float, counts: np.ndarray, sums: np.ndarray, weights: np.ndarray
    ) -> Interval:
        """The paired bootstrap's BCa interval, or Bonett-Price's where its resamples take too few values (every
        difference 0 or the same, few discordant videos, one video); `self.rho` is the differences' correlation."""
        return _bca_if_resamples_vary(observed, counts, sums, weights) or paired_fallback(a, b, len(counts), self.rho)


def _bca_if_resamples_vary(estimate: float, counts: np.ndarray, sums: np.ndarray, weights: np.ndarray) -> Interval | None:
    """The BCa interval of the resampled means, or None where the resamples take fewer than MIN_DISTINCT values
    (one video gives one value) or BCa has no width: there a fallback decides."""
    samples = (weights @ sums) / (weights @ counts)
    if len(np.unique(np.round(samples, 12))) < MIN_DISTINCT:
        return None
    low, high = bca_interval(samples, estimate, counts, sums)
    return Interval(low, high, "bca") if low is not None and high is not None and high > low else None


def mean_interval(
    clusters: Sequence[Hashable], values: Sequence[float], settings: Bootstrap, key: Sequence[Hashable]
) -> tuple[float | None, float | None]:
    """95% interval of the mean of `values` (per item), resampling clusters (BCa); one number on its own."""
    return Resampler(clusters, settings, key).mean_interval(clusters, values)


@dataclass(frozen=True)
class Paired:
    """A paired difference mean(a) - mean(b) over the same items, with its interval and p-value."""

    difference: float
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    n: int
    n_clusters: int
    ci_method: str  # as Interval.method
    test: SignFlipTest | None = None  # the p-value's test (virtuebench.support.paired): exact or Monte Carlo, its error


def paired_difference(
    clusters: Sequence[Hashable], a: Sequence[float], b: Sequence[float], settings: Bootstrap, key: Sequence[Hashable]
) -> Paired:
    """mean(a) - mean(b) over the same items (a[i], b[i]: item i under the two arms).

    The interval: the paired cluster bootstrap (BCa). The p-value: a randomization test over clusters,
    which swaps the two arms of every item of a video together (a sign flip of the video's summed
    difference; valid when the arms are exchangeable under no difference), exact where the sign patterns can be
    counted (virtuebench.support.paired), conventional by default. A bootstrap test from the same resamples was
    tried first and rejected: it rejected too often under no difference. The randomization test's false-positive
    rates at 5, 12 and 50 videos are in docs/statistics.md (benchmarks/bench_coverage.py);
    tests/support/test_bootstrap.py checks its p-values are valid (conventional) and about uniform (mid-p) at 40 videos.
    """
    return Resampler(clusters, settings, key).paired(clusters, a, b, key)


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjustment (family-wise error) of `p_values`, in their order; None stays None."""
    present = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    adjusted: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(present):
        running = max(running, min(1.0, (len(present) - rank) * p))
        adjusted[i] = running
    return adjusted
