"""Test helpers for the report's intervals (virtuebench.support.bootstrap)."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence

import numpy as np

from virtuebench.support import bootstrap
from virtuebench.support.bootstrap import Interval


def narrow_closed_forms(monkeypatch) -> None:
    """Give every closed-form interval (scores and paired comparisons) no width, so the bootstrap's (BCa) is chosen wherever the number has
    BCA_MIN_VIDEOS videos: the closed forms (Clopper-Pearson and Agresti-Coull-type on n*) were wider than BCa on
    every design tried, so a test of what BCa does (its seed, its resamples) needs them out of the way."""

    def share(sizes, sums, confidence=bootstrap.CONFIDENCE) -> Interval:
        at = float(sum(sums)) / float(sum(sizes))
        return Interval(at, at, "narrowed-for-a-test")

    def mean(values, bounds, sizes, sums, confidence=bootstrap.CONFIDENCE) -> Interval:
        at = float(sum(values)) / len(values)
        return Interval(at, at, "narrowed-for-a-test")

    def paired(a, b, sizes, sums, confidence=bootstrap.CONFIDENCE) -> Interval:
        at = (float(sum(a)) - float(sum(b))) / len(a)
        return Interval(at, at, "narrowed-for-a-test")

    monkeypatch.setattr(bootstrap, "fallback_interval", share)
    monkeypatch.setattr(bootstrap, "paired_fallback", paired)
    monkeypatch.setattr(bootstrap, "bounded_mean_fallback", mean)


def intra_cluster_correlation(groups: Iterable[tuple[Sequence[Hashable], Sequence[float]]]) -> float:
    """The one-way ANOVA estimate of the intra-cluster correlation, pooled over `groups` (each a list of clusters
    and the values of its items), at most 1; negative where the items of a cluster differ more than chance would
    make them, nan where it cannot be estimated (no cluster with two items, or every value the same). The
    estimator the closed forms used before issue 49 (virtuebench.support.bootstrap.cluster_design replaced it): kept
    here, outside the package, for the tests that show the old design effect's jump where it crosses 0."""
    ssb = ssw = df_b = df_w = m0_sum = 0.0
    for clusters, values in groups:
        if isinstance(clusters, np.ndarray) and clusters.dtype.kind in "iu":
            _, at = np.unique(clusters, return_inverse=True)
        else:
            index: dict[Hashable, int] = {}
            at = np.fromiter((index.setdefault(cluster, len(index)) for cluster in clusters), dtype=np.int64, count=len(clusters))
        observed = np.asarray(values, dtype=float)
        sizes = np.bincount(at).astype(float)
        k, n = np.count_nonzero(sizes), len(observed)
        if k < 2 or n <= k:
            continue
        means = np.bincount(at, weights=observed) / np.where(sizes > 0, sizes, 1)
        ssb += float((sizes * (means - observed.sum() / n) ** 2).sum())
        ssw += float(((observed - means[at]) ** 2).sum())
        df_b, df_w = df_b + k - 1, df_w + n - k
        m0_sum += n - float((sizes**2).sum()) / n
    if df_b == 0 or df_w == 0:
        return float("nan")
    msb, msw, m0 = ssb / df_b, ssw / df_w, m0_sum / df_b
    if msb + (m0 - 1) * msw <= 0:
        return float("nan")
    return float(min(1.0, (msb - msw) / (msb + (m0 - 1) * msw)))
