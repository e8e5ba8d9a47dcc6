"""Cluster bootstrap for the report's intervals and paired comparisons.

VirtueBench asks several questions about one video, and at one level they share the same frames, so
items are not independent: the unit resampled is the video (a cluster), as in a cluster bootstrap
(Davison & Hinkley 1997, sec. 3.8). A resample draws as many videos as there are, with replacement,
and keeps every item of each drawn video; a rate is then the sum over the drawn items over their
number. Intervals are BCa percentile intervals (Efron & Tibshirani 1993, ch. 14); a paired
comparison's p-value comes from a randomization test over videos (paired_difference says why).

The report draws one set of resamples of a judge's videos and computes every number from it
(`Resampler`), seeded from the configured seed and the judge: the same digits on every rerun, and an
interval does not depend on which other numbers are computed (the universe is the benchmark's videos).
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

NORMAL = NormalDist()

CONFIDENCE = 0.95  # results/scores.csv's intervals are 95% (shared/CONTRACT.md)


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
    """One set of bootstrap resamples of a benchmark's videos (its `universe`), shared by every number
    computed from it: a resample draws as many videos as the universe holds, with replacement, and each
    number is computed over the drawn videos that hold its items. Sharing the resamples is what a reader
    means by "the benchmark drawn again", and it makes 1,500 intervals cost one draw instead of 1,500
    (paper scale, 901 videos: about 2 ms per number). Resamples that draw none of a number's videos are
    left out of its interval."""

    def __init__(self, universe: Iterable[Hashable], settings: Bootstrap, key: Sequence[Hashable]) -> None:
        self.index = {cluster: i for i, cluster in enumerate(sorted(set(universe), key=repr))}
        self.settings, self.key = settings, tuple(key)
        self.weights = settings.weights(len(self.index), self.key).astype(float)

    def _sums(self, clusters: Sequence[Hashable], values: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
        try:
            index = np.array([self.index[cluster] for cluster in clusters], dtype=np.int64)
        except KeyError as error:
            raise ValueError(f"cluster {error.args[0]!r} is not in the resampled universe") from None
        size = len(self.index)
        return np.bincount(index, minlength=size).astype(float), np.bincount(index, weights=np.asarray(values, dtype=float), minlength=size)

    def _samples(self, counts: np.ndarray, sums: np.ndarray) -> np.ndarray:
        drawn = self.weights @ counts
        kept = drawn > 0
        return (self.weights[kept] @ sums) / drawn[kept]

    def mean_interval(self, clusters: Sequence[Hashable], values: Sequence[float]) -> tuple[float | None, float | None]:
        """95% BCa interval of the mean of `values` (one per item, its cluster in `clusters`)."""
        counts, sums = self._sums(clusters, values)
        if counts.sum() == 0:
            return None, None
        present = counts > 0
        return bca_interval(self._samples(counts, sums), float(sums.sum() / counts.sum()), counts[present], sums[present])

    def paired(self, clusters: Sequence[Hashable], a: Sequence[float], b: Sequence[float], key: Sequence[Hashable]) -> Paired:
        """See paired_difference; `key` seeds the randomization test."""
        if len(a) != len(b) or len(a) != len(clusters):
            raise ValueError(f"paired values differ in length: {len(clusters)} clusters, {len(a)} and {len(b)} values")
        diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
        counts, sums = self._sums(clusters, diff)
        if counts.sum() == 0:
            return Paired(float("nan"), None, None, None, 0, 0)
        present = counts > 0
        counts, sums_present, total = counts, sums[present], counts.sum()
        observed = float(sums.sum() / total)
        low, high = bca_interval(self._samples(counts, sums), observed, counts[present], sums_present)
        n_clusters = int(present.sum())
        if not np.any(sums_present):  # no video with any discordant item: nothing suggests a difference
            return Paired(observed, low, high, 1.0, int(total), n_clusters)
        signs = self.settings.rng((*key, "randomization")).choice(np.array([-1.0, 1.0]), size=(self.settings.resamples, n_clusters))
        flipped = np.abs(signs @ sums_present) / total
        tolerance = 1e-9 * max(1.0, abs(observed))
        beyond = np.count_nonzero(flipped > abs(observed) + tolerance)
        tied = np.count_nonzero(np.abs(flipped - abs(observed)) <= tolerance)
        p_value = min(1.0, (beyond + 0.5 * tied + 1) / (self.settings.resamples + 1))
        return Paired(observed, low, high, float(p_value), int(total), n_clusters)


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


def paired_difference(
    clusters: Sequence[Hashable], a: Sequence[float], b: Sequence[float], settings: Bootstrap, key: Sequence[Hashable]
) -> Paired:
    """mean(a) - mean(b) over the same items (a[i], b[i]: item i under the two arms).

    The interval: the paired cluster bootstrap (BCa). The p-value: a randomization test over clusters,
    which swaps the two arms of every item of a video together (a sign flip of the video's summed
    difference; valid when the arms are exchangeable under no difference), mid-p for the many ties.
    A bootstrap test from the same resamples was tried first and rejected: under no difference it gave
    p < 0.01 in 1.8% and p < 0.1 in 11.8% of 2000 simulated comparisons (40 videos); this test gave
    0.9% and 10.9% (tests/test_bootstrap.py checks it).
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
