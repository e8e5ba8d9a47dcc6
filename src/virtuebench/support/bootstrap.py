"""Cluster bootstrap for the report's intervals and paired comparisons.

VirtueBench asks several questions about one video, and at one level they share the same frames, so
items are not independent: the unit resampled is the video (a cluster), as in a cluster bootstrap
(Davison & Hinkley 1997, sec. 3.8). Each number is resampled over its own videos (the standard cluster
bootstrap of its items: as many videos as it has, drawn with replacement, every item of a drawn video kept);
numbers over the same videos share the same resamples, so the same digits come back on every rerun and a
paired comparison's arms move together. Intervals are BCa percentile intervals (Efron & Tibshirani 1993,
ch. 14); a paired comparison's p-value comes from a randomization test over videos (paired_difference says
why; virtuebench.support.paired computes it).

Which interval a number gets is decided by how much information it has, the number of its videos, never by
what its resamples happen to look like. Below BCA_MIN_VIDEOS videos (the cut is read off the coverage table
in docs/statistics.md: BCa falls short of 93% coverage there) it is a closed form on the number's own cluster
design (`cluster_design`), from its videos alone:
- V, the CR2 cluster-robust variance of its mean (Bell & McCaffrey 2002; `cr2_variance`);
- n_eff = min(G, s2 / V), s2 the per-item variance the closed form assumes: never more items than videos, and no
  sign test on an estimated correlation, so no jump where one crosses 0 (the earlier pooled ANOVA rho had one);
- Bell & McCaffrey's degrees of freedom of V (`bell_mccaffrey_df`: Imbens & Kolesar 2016), which fall as video
  sizes grow unequal, and Korn & Graubard's (1998) adjusted size n* = n_eff (z / t_df)^2 (`Design.adjusted_items`).
On n* items (`fallback_interval`, `bounded_mean_fallback`, `paired_fallback`):
- a share (accuracy): Clopper-Pearson (`clopper_pearson_interval`), as Korn & Graubard's own interval;
- a bounded mean (the trust score, three-valued): Agresti-Coull-type on the values' own variance
  (`agresti_coull_mean`);
- a paired difference of two 0/1 arms: Bonett-Price's adjusted Wald interval (`bonett_price_interval`).
From BCA_MIN_VIDEOS videos on it is the BCa interval, unless the closed form on the same data is wider (or BCa
has no width, as where every item is right): then the closed form. So a number is never given a narrower
interval than the method for fewer videos would give it on the same data. Each interval says which method made
it (`Interval.method`; results/scores.csv's `ci_method` and `trust_ci_method`, results/comparisons.csv's
`ci_method`). tools/bench_coverage.py measures the coverage (docs/statistics.md).

The bootstrap's matrix products run on one BLAS thread (threadpoolctl): with OpenBLAS's default threads on a
machine shared with other jobs a (2000 x 900) product took 4.56 ms against 0.28 ms on one thread.
"""

from __future__ import annotations

import functools
import hashlib
import sys
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any, TypeVar

import numpy as np
from threadpoolctl import ThreadpoolController

from virtuebench.support.paired import PValue, SignFlipTest, sign_flip_test
from virtuebench.support.resample_cache import cached_weights

NORMAL = NormalDist()
T = TypeVar("T")

CONFIDENCE = 0.95  # results/scores.csv's intervals are 95% (docs/contract.md)
#: Numbers over fewer videos than this get the closed-form interval (module docstring; docs/statistics.md's
#: coverage table: BCa covers 86% at 5 videos and 91-93% at 12, 94-95% from 50 on).
BCA_MIN_VIDEOS = 50

#: Weights matrices kept as floats (paper scale: 14 MB each) besides the compact uint16 copies of every set.
FLOAT_WEIGHTS_KEPT = 6

_BLAS = ThreadpoolController()  # built once: limiting through it costs microseconds a call


def one_blas_thread(function: Callable[..., T]) -> Callable[..., T]:
    """Run `function` with BLAS limited to one thread (module docstring: the bootstrap's products)."""

    @functools.wraps(function)
    def pinned(*args: Any, **kwargs: Any) -> T:
        with _BLAS.limit(limits=1, user_api="blas"):
            return function(*args, **kwargs)

    return pinned


@dataclass(frozen=True)
class Interval:
    low: float | None
    high: float | None
    # "bca", "clopper-pearson-cr2", "agresti-coull-cr2", "bonett-price-cr2", or "none" (no item)
    method: str


class MissingDependency(RuntimeError):
    """A package the intervals need is not installed (the CLIs print it as one line)."""


@functools.cache
def _special() -> Any:
    """scipy.special, imported on first use: it costs about 0.25 s to import, which a CLI that never makes a
    closed-form interval should not pay. Its stdtrit is the function scipy.stats.t.ppf evaluates and its betaincinv
    the one scipy.stats.beta.ppf does, without their argument checks (0.9 us a call against 57 us)."""
    try:
        import scipy.special
    except ImportError:
        raise MissingDependency(
            f"scipy is not installed for {sys.executable}; the intervals need its t and beta quantiles: run `make install` "
            "(or pip install 'scipy>=1.13')"
        ) from None
    return scipy.special


def require_scipy() -> None:
    """Raise MissingDependency now, before any work, where scipy cannot be imported."""
    _special()


def cr2_variance(sizes: np.ndarray, sums: np.ndarray) -> float:
    """The CR2 cluster-robust variance of the mean of n items over videos with `sizes` items and value `sums`
    (Bell & McCaffrey 2002): sum_g (Y_g - ybar m_g)^2 / (1 - m_g / n) / n^2, the closed form of the bias-reduced
    sandwich for an intercept-only model (a video's leverage is m_g / n). Two videos at least (one would have
    leverage 1)."""
    n = float(sizes.sum())
    residuals = sums - (sums.sum() / n) * sizes
    return float((residuals * residuals / (1 - sizes / n)).sum()) / (n * n)


def bell_mccaffrey_df(sizes: np.ndarray) -> float:
    """Bell & McCaffrey's degrees of freedom for the CR2 variance of a mean, (tr M)^2 / tr(M^2) (Imbens & Kolesar
    2016, "Robust standard errors in small samples: some practical advice", REStat 98:701), in closed form for
    the intercept-only model: with c_g = 1 / ((1 - m_g / n) n^2), tr M = sum c_g (m_g - m_g^2 / n) and
    tr M^2 = sum c_g^2 m_g^2 - 2 sum c_g^2 m_g^3 / n + (sum c_g m_g^2)^2 / n^2. With q_g = m_g / n the shares and
    k_g = 1 - q_g, tr M = 1 / n and the ratio is 1 / (sum q_g^2 (1 - 2 q_g) / k_g^2 + (sum q_g^2 / k_g)^2), which is
    what is computed. It depends only on the sizes: G - 1 for G equal videos, and it falls as they grow unequal (one
    video with a third of the items: 2 to 3). At least 1; 1 for one video."""
    counts = sizes[sizes > 0]
    if len(counts) < 2:
        return 1.0
    shares = counts / float(counts.sum())
    weighted = shares * shares / (1 - shares)
    return max(1.0, 1 / (float((weighted * (1 - 2 * shares) / (1 - shares)).sum()) + float(weighted.sum()) ** 2))


@dataclass(frozen=True)
class Design:
    """What one number's items are worth, as the closed forms use it: `effective_items` (n_eff = min(G, s2 / V),
    the per-item variance s2 the closed form assumes over the CR2 variance of the mean V; G, the number of videos,
    where V or s2 is 0) and the CR2 variance's Bell-McCaffrey `degrees_of_freedom`."""

    effective_items: float
    degrees_of_freedom: float

    def adjusted_items(self, confidence: float = CONFIDENCE) -> float:
        """Korn & Graubard's (1998) degrees-of-freedom-adjusted effective size n* = n_eff (z / t_df)^2: a closed form
        with z on n* items has the width of one with t_df on n_eff items."""
        tail = 1 - (1 - confidence) / 2
        return self.effective_items * (NORMAL.inv_cdf(tail) / _special().stdtrit(self.degrees_of_freedom, tail)) ** 2


def cluster_design(sizes: Sequence[float] | np.ndarray, sums: Sequence[float] | np.ndarray, spread: float) -> Design:
    """The Design of a mean over videos with `sizes` items and value `sums` (per video), `spread` the per-item
    variance the closed form assumes (p(1 - p) for a share). n_eff never exceeds the number of videos, whatever
    the estimated variance: no sign test, no jump (module docstring). One video: n_eff 1, df 1."""
    counts, totals = np.asarray(sizes, dtype=float), np.asarray(sums, dtype=float)
    if len(counts) and counts.min() <= 0:  # a video without items is none of the number's
        present = counts > 0
        counts, totals = counts[present], totals[present]
    videos = len(counts)
    if videos < 2:
        return Design(1.0, 1.0)
    variance = cr2_variance(counts, totals)
    effective = spread / variance if variance > 0 and spread > 0 else float(videos)
    return Design(min(float(videos), effective), bell_mccaffrey_df(counts))


def clopper_pearson_interval(share: float, items: float, confidence: float = CONFIDENCE) -> Interval:
    """The Clopper-Pearson interval for a share in [0, 1] on `items` items (any positive number: n* for a clustered
    number), `share * items` of them right, from the beta quantiles (Korn & Graubard 1998 use it so on their n*;
    it is exact for whole counts and conservative). Chosen over Wilson's, which on the same n* left the truth above
    the interval in most benchmarks with an error at rate 0.99 (docs/statistics.md, "Coverage")."""
    alpha = 1 - confidence
    right = share * items
    special = _special()
    low = 0.0 if share <= 0 else float(special.betaincinv(right, items - right + 1, alpha / 2))
    high = 1.0 if share >= 1 else float(special.betaincinv(right + 1, items - right, 1 - alpha / 2))
    return Interval(low, high, "clopper-pearson-cr2")


def fallback_interval(sizes: Sequence[float] | np.ndarray, sums: Sequence[float] | np.ndarray, confidence: float = CONFIDENCE) -> Interval:
    """The closed-form interval for a share (items' values 0/1, or a sampled model's means over runs) over videos
    with `sizes` items and value `sums`: `clopper_pearson_interval` on n* items (`cluster_design` with s2 = p(1 - p),
    the binomial per-item variance; for 0/1 values the items' own variance)."""
    counts, totals = np.asarray(sizes, dtype=float), np.asarray(sums, dtype=float)
    share = min(1.0, max(0.0, float(totals.sum()) / float(counts.sum())))
    return clopper_pearson_interval(share, cluster_design(counts, totals, share * (1 - share)).adjusted_items(confidence), confidence)


def agresti_coull_mean(values: Sequence[float], bounds: tuple[float, float], items: float, confidence: float = CONFIDENCE) -> Interval:
    """The interval for the mean of values within `bounds` (the trust score: three values) as if they were `items`
    items, Agresti-Coull-type: z^2/2 pseudo-items at each bound join them, and the interval is the augmented mean
    +- z times its standard error from the augmented values' own variance, clipped to `bounds`. For values only at
    the bounds it is Agresti & Coull's (1998) interval for a proportion; the pseudo-items keep it from collapsing
    where every value is the same, and the values' own variance keeps it narrower than a binary interval where they
    lie between the bounds."""
    lo, hi = bounds
    observed = np.asarray(values, dtype=float)
    z = NORMAL.inv_cdf(1 - (1 - confidence) / 2)
    pseudo = z * z / 2  # at each bound
    total = items + 2 * pseudo
    mean = (items * observed.mean() + pseudo * (lo + hi)) / total
    second_moment = (items * float(np.mean((observed - mean) ** 2)) + pseudo * ((lo - mean) ** 2 + (hi - mean) ** 2)) / total
    half = z * (second_moment / total) ** 0.5
    return Interval(max(lo, mean - half), min(hi, mean + half), "agresti-coull-cr2")


def bounded_mean_fallback(
    values: Sequence[float],
    bounds: tuple[float, float],
    sizes: Sequence[float] | np.ndarray,
    sums: Sequence[float] | np.ndarray,
    confidence: float = CONFIDENCE,
) -> Interval:
    """The closed-form interval for the mean of `values` within `bounds` over videos with `sizes` items and value
    `sums`: `agresti_coull_mean` on n* items (`cluster_design` with s2 = the values' own variance)."""
    spread = float(np.asarray(values, dtype=float).var())
    return agresti_coull_mean(values, bounds, cluster_design(sizes, sums, spread).adjusted_items(confidence), confidence)


def _discordant(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """The shares of items right under a only and under b only, for arms in [0, 1] (`bonett_price_interval`)."""
    first, second = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if not (np.all((first >= 0) & (first <= 1)) and np.all((second >= 0) & (second <= 1))):
        raise ValueError("paired_fallback needs arms within [0, 1] (correct or not per item, or a mean over runs)")
    return float(np.mean(np.clip(first - second, 0.0, None))), float(np.mean(np.clip(second - first, 0.0, None)))


def bonett_price_interval(a: Sequence[float], b: Sequence[float], items: float, confidence: float = CONFIDENCE) -> Interval:
    """The interval for mean(a) - mean(b) of paired arms in [0, 1] as if they were `items` pairs: Bonett & Price's
    (2012) adjusted Wald interval (one pseudo-item added to each discordant cell). Recommended for paired
    proportions by Fagerland, Lydersen & Laake (2014); it has positive width even where no item is discordant.

    Arms in [0, 1] (a sampled model's per-item mean over its runs) count each item's difference d as d of a
    discordant item where positive, -d of one the other way where negative: for 0/1 arms these are the discordant
    counts, and elsewhere the variance it implies is at least the differences' own (d^2 <= |d|), so the interval is
    conservative."""
    return _bonett_price(*_discordant(a, b), items, confidence)


def _bonett_price(only_a: float, only_b: float, items: float, confidence: float) -> Interval:
    """`bonett_price_interval` from the discordant shares."""
    share_a, share_b = (items * only_a + 1) / (items + 2), (items * only_b + 1) / (items + 2)
    difference = share_a - share_b
    z = NORMAL.inv_cdf(1 - (1 - confidence) / 2)
    half = z * ((share_a + share_b - difference**2) / (items + 2)) ** 0.5
    return Interval(max(-1.0, difference - half), min(1.0, difference + half), "bonett-price-cr2")


def paired_fallback(
    a: Sequence[float],
    b: Sequence[float],
    sizes: Sequence[float] | np.ndarray,
    sums: Sequence[float] | np.ndarray,
    confidence: float = CONFIDENCE,
) -> Interval:
    """The closed-form interval for mean(a) - mean(b) over videos with `sizes` items and `sums` of the differences
    a - b: `bonett_price_interval` on n* items (`cluster_design` with s2 = mean(|d|) - mean(d)^2, the per-item
    variance Bonett-Price assumes; for 0/1 arms the differences' own variance)."""
    only_a, only_b = _discordant(a, b)
    spread = max(0.0, only_a + only_b - (only_a - only_b) ** 2)
    return _bonett_price(only_a, only_b, cluster_design(sizes, sums, spread).adjusted_items(confidence), confidence)


@dataclass(frozen=True)
class Bootstrap:
    """Settings: `resamples` per number and the base `seed` (config `report.bootstrap`); `cache`: a folder keeping
    the drawn weights for other jobs (virtuebench.support.resample_cache), None to draw every time. The cache gives
    back the very counts a draw gives, so it changes no digit."""

    resamples: int = 2000
    seed: int = 0
    cache: str | None = field(default=None, compare=False)

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

        def draw() -> np.ndarray:
            return self.rng(key).multinomial(n_clusters, np.full(n_clusters, 1 / n_clusters), size=self.resamples)

        if self.cache is None:
            return draw()
        return cached_weights(self.cache, self.seed, self.resamples, n_clusters, key, draw)


def bca_interval(
    samples: np.ndarray, estimate: float, counts: np.ndarray, sums: np.ndarray, confidence: float = CONFIDENCE
) -> tuple[float | None, float | None]:
    """Bias-corrected and accelerated percentile interval (Efron & Tibshirani 1993, ch. 14) of a ratio
    sum/count over clusters; the acceleration from the delete-one-cluster jackknife. None, None with
    fewer than two clusters: one video says nothing about how results vary between videos."""
    percents = bca_percents(samples, estimate, counts, sums, confidence)
    if percents is None:
        return None, None
    low, high = np.percentile(samples, percents)
    return float(low), float(high)


def bca_percents(
    samples: np.ndarray, estimate: float, counts: np.ndarray, sums: np.ndarray, confidence: float = CONFIDENCE
) -> list[float] | None:
    """The percentiles of `samples` that bound the BCa interval (`bca_interval`); None with fewer than two
    clusters. Apart, so that many numbers' percentiles can be taken in one call (`Resampler.intervals`)."""
    if len(counts) < 2:
        return None
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
    return percents


class Resampler:
    """The bootstrap resamples of a judge's numbers: each number is resampled over its own videos (the standard
    cluster bootstrap of its items), the resamples seeded by the set of videos, so numbers over the same videos
    share them (at paper scale, 901 videos and 1,500 numbers, a few distinct video sets). Each number's closed-form
    interval rests on its own videos alone (module docstring)."""

    def __init__(self, universe: Iterable[Hashable], settings: Bootstrap, key: Sequence[Hashable]) -> None:
        self.universe = set(universe)
        self.settings, self.key = settings, tuple(key)
        self._weights: dict[tuple[Hashable, ...], np.ndarray] = {}
        self._floats: OrderedDict[tuple[Hashable, ...], np.ndarray] = OrderedDict()
        # the universe in the order a number's videos are resampled in; `codes` gives positions in it
        self.order = np.empty(len(self.universe), dtype=object)
        self.order[:] = sorted(self.universe, key=repr)
        self._position = {cluster: i for i, cluster in enumerate(self.order)}

    def codes(self, clusters: Sequence[Hashable]) -> np.ndarray:
        """Each cluster's position in `order`, for a Number with `coded=True` (a fast path for many numbers)."""
        try:
            return np.fromiter((self._position[cluster] for cluster in clusters), dtype=np.int64, count=len(clusters))
        except KeyError as error:
            raise ValueError(f"cluster {error.args[0]!r} is not in the resampled universe") from None

    def _sums(
        self, clusters: Sequence[Hashable] | np.ndarray, values: Sequence[float], coded: bool = False
    ) -> tuple[tuple[Hashable, ...], np.ndarray, np.ndarray]:
        """The number's own videos (sorted as `order`), and per video its item count and value sum. `coded`: the
        clusters are positions in `order` (`codes`)."""
        if coded:  # per position in `order`, then the positions present: each video's items summed in item order
            codes = np.asarray(clusters, dtype=np.int64)
            every = np.bincount(codes, minlength=len(self.order))
            present = np.flatnonzero(every)
            sums = np.bincount(codes, weights=np.asarray(values, dtype=float), minlength=len(self.order))[present]
            return tuple(self.order[present]), every[present].astype(float), sums
        unknown = next((cluster for cluster in clusters if cluster not in self.universe), None)
        if unknown is not None:
            raise ValueError(f"cluster {unknown!r} is not in the resampled universe")
        order = tuple(sorted(set(clusters), key=repr))
        index = {cluster: i for i, cluster in enumerate(order)}
        at = np.array([index[cluster] for cluster in clusters], dtype=np.int64)
        counts = np.bincount(at, minlength=len(order)).astype(float)
        sums = np.bincount(at, weights=np.asarray(values, dtype=float), minlength=len(order))
        return order, counts, sums

    def _weights_of(self, order: tuple[Hashable, ...]) -> np.ndarray:
        """The resample weights of a set of videos, (resamples, videos), as floats."""
        if order not in self._weights:
            digest = hashlib.sha256(repr(order).encode()).hexdigest()[:16]
            # kept small (paper scale: about 30 video sets of up to 901 videos, 3.6 MB each as uint16)
            self._weights[order] = self.settings.weights(len(order), (*self.key, digest)).astype(
                np.uint16 if len(order) < 65536 else np.int32
            )
        if order not in self._floats:  # the few most recent as floats: paired rows come in runs over the same videos
            self._floats[order] = self._weights[order].astype(float)
            while len(self._floats) > FLOAT_WEIGHTS_KEPT:
                self._floats.popitem(last=False)
        self._floats.move_to_end(order)
        return self._floats[order]

    def interval(self, clusters: Sequence[Hashable], values: Sequence[float], bounds: tuple[float, float] | None = None) -> Interval:
        """95% interval of the mean of `values` (one per item, its video in `clusters`): the closed form below
        BCA_MIN_VIDEOS videos, else BCa or the closed form where that is wider (module docstring). `bounds`:
        None for 0/1 values (a share); else the range the values lie in (a bounded mean)."""
        return self.intervals([Number(clusters, values, bounds)])[0]

    @one_blas_thread
    def intervals(self, numbers: Sequence[Number]) -> list[Interval]:
        """`interval` of each of `numbers`, computed together: the numbers over one set of videos share its
        weights matrix, and their resampled means come from one matrix product."""
        found: list[Interval | None] = [None] * len(numbers)
        batches: dict[tuple[Hashable, ...], list[tuple[int, np.ndarray, np.ndarray]]] = {}
        for at, number in enumerate(numbers):
            if len(number.values) == 0:
                found[at] = Interval(None, None, "none")
                continue
            order, counts, sums = self._sums(number.clusters, number.values, number.coded)
            batches.setdefault(order, []).append((at, counts, sums))
        for order, batch in batches.items():
            resampled: dict[int, Interval | None] = {}
            if len(order) >= BCA_MIN_VIDEOS:
                weights = self._weights_of(order)
                counts = np.column_stack([counts for _, counts, _ in batch])
                sums = np.column_stack([sums for _, _, sums in batch])
                samples = (weights @ sums) / (weights @ counts)
                resampled.update(zip((at for at, _, _ in batch), _bca_columns(samples, counts, sums)))
            for at, counts_of, sums_of in batch:
                number = numbers[at]
                if number.bounds is None:
                    closed = fallback_interval(counts_of, sums_of)
                else:
                    closed = bounded_mean_fallback(number.values, number.bounds, counts_of, sums_of)
                found[at] = _wider(resampled.get(at), closed)
        return [interval for interval in found if interval is not None]

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
        return self.paired_all([PairedNumber(clusters, a, b, key)], p_value)[0]

    @one_blas_thread
    def paired_all(self, numbers: Sequence[PairedNumber], p_value: PValue = "conventional") -> list[Paired]:
        """`paired` of each of `numbers`, computed together: the numbers over one set of videos take its weights once
        (as floats), and where their summed differences are whole numbers (0/1 arms) their resampled means come from
        one matrix product, exact in any order of summation, so the digits are those of one product per number."""
        found: list[Paired | None] = [None] * len(numbers)
        batches: dict[tuple[Hashable, ...], list[tuple[int, np.ndarray, np.ndarray, np.ndarray]]] = {}
        for at, number in enumerate(numbers):
            if len(number.a) != len(number.b) or len(number.a) != len(number.clusters):
                raise ValueError(
                    f"paired values differ in length: {len(number.clusters)} clusters, {len(number.a)} and {len(number.b)} values"
                )
            diff = np.asarray(number.a, dtype=float) - np.asarray(number.b, dtype=float)
            if len(diff) == 0:
                found[at] = Paired(float("nan"), None, None, None, 0, 0, "none")
                continue
            order, counts, sums = self._sums(number.clusters, diff, number.coded)
            batches.setdefault(order, []).append((at, diff, counts, sums))
        for order, batch in batches.items():
            resampled = self._paired_bootstrap(order, [(counts, sums) for _, _, counts, sums in batch])
            for (at, _, counts, sums), bootstrapped in zip(batch, resampled):
                number = numbers[at]
                interval = self._paired_interval(number.a, number.b, counts, sums, bootstrapped)
                test = sign_flip_test(sums, self.settings.rng((*number.key, "randomization")), p_value)
                observed = float(sums.sum() / counts.sum())
                found[at] = Paired(
                    observed, interval.low, interval.high, test.p_value, int(counts.sum()), len(counts), interval.method, test
                )
        return [paired for paired in found if paired is not None]

    def _paired_bootstrap(self, order: tuple[Hashable, ...], batch: list[tuple[np.ndarray, np.ndarray]]) -> list[Interval | None]:
        """The paired bootstrap's BCa interval of each (counts, sums) over the videos `order` (None below
        BCA_MIN_VIDEOS videos, where it is not used, and where it has no width)."""
        if len(order) < BCA_MIN_VIDEOS:
            return [None] * len(batch)
        weights = self._weights_of(order)  # drawn only where the bootstrap is used
        whole = all(np.array_equal(sums, np.round(sums)) for _, sums in batch)
        if whole and len(batch) > 1:  # whole numbers: the product's sums are exact, the same in any order
            counts = np.column_stack([counts for counts, _ in batch])
            sums = np.column_stack([sums for _, sums in batch])
            return _bca_columns((weights @ sums) / (weights @ counts), counts, sums)
        return [_bca((weights @ sums) / (weights @ counts), counts, sums) for counts, sums in batch]

    def _paired_interval(
        self, a: Sequence[float], b: Sequence[float], counts: np.ndarray, sums: np.ndarray, resampled: Interval | None
    ) -> Interval:
        """Bonett-Price's interval below BCA_MIN_VIDEOS videos; from there the paired bootstrap's BCa interval
        (`resampled`), or Bonett-Price's where that is wider or BCa has no width (every difference 0, say); `counts`
        and `sums`: each video's items and summed differences."""
        closed = paired_fallback(a, b, counts, sums)
        if len(counts) < BCA_MIN_VIDEOS:
            return closed
        return _wider(resampled, closed)


@dataclass(frozen=True)
class PairedNumber:
    """One paired difference to give an interval and a p-value (`Resampler.paired_all`): its items' videos, the two
    arms' values per item, and the key seeding its randomization test. `coded`: as Number's."""

    clusters: Sequence[Hashable] | np.ndarray
    a: Sequence[float] | np.ndarray
    b: Sequence[float] | np.ndarray
    key: Sequence[Hashable]
    coded: bool = False


@dataclass(frozen=True)
class Number:
    """One number to give an interval (`Resampler.intervals`): its items' videos and values, the values' range
    (None: 0/1 values, a share). `coded`: `clusters`
    are positions in the resampler's `order` (`Resampler.codes`), not the videos themselves."""

    clusters: Sequence[Hashable] | np.ndarray
    values: Sequence[float] | np.ndarray
    bounds: tuple[float, float] | None = None
    coded: bool = False


def _bca(samples: np.ndarray, counts: np.ndarray, sums: np.ndarray) -> Interval | None:
    """The BCa interval of the resampled means `samples` of the ratio sums/counts, or None where it has no width
    (every resample the same, as where every item is right)."""
    low, high = bca_interval(samples, float(sums.sum() / counts.sum()), counts, sums)
    return Interval(low, high, "bca") if low is not None and high is not None and high > low else None


def _bca_columns(samples: np.ndarray, counts: np.ndarray, sums: np.ndarray) -> list[Interval | None]:
    """`_bca` of every column (one number each): the percentiles of all columns taken in one call, which gives the
    same values as one call per column (the same order statistics and interpolation)."""
    columns = samples.shape[1]
    percents = [
        bca_percents(samples[:, column], float(sums[:, column].sum() / counts[:, column].sum()), counts[:, column], sums[:, column])
        for column in range(columns)
    ]
    wanted = [p for found in percents if found is not None for p in found]
    if not wanted:
        return [None] * columns
    ends = np.percentile(samples, wanted, axis=0)  # (len(wanted), columns): each column's own two are picked
    found: list[Interval | None] = []
    row = 0
    for column, percent in enumerate(percents):
        if percent is None:
            found.append(None)
            continue
        low, high = float(ends[row, column]), float(ends[row + 1, column])
        row += 2
        found.append(Interval(low, high, "bca") if high > low else None)
    return found


def _wider(resampled: Interval | None, closed: Interval) -> Interval:
    """The bootstrap's interval unless the closed form is wider (or there is no bootstrap interval): a number
    never gets a narrower interval than the closed form, the method for fewer videos, gives the same data."""
    if resampled is None or resampled.low is None or resampled.high is None or closed.low is None or closed.high is None:
        return closed
    return closed if closed.high - closed.low > resampled.high - resampled.low else resampled


def mean_interval(
    clusters: Sequence[Hashable], values: Sequence[float], settings: Bootstrap, key: Sequence[Hashable]
) -> tuple[float | None, float | None]:
    """95% interval of the mean of `values` (per item), one number on its own: as `Resampler.interval`."""
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
    rates at 5, 12 and 50 videos are in docs/statistics.md (tools/bench_coverage.py);
    tests/support/test_bootstrap.py checks its p-values are valid (conventional) and about uniform (mid-p) at 40 videos.
    Below BCA_MIN_VIDEOS videos, and where it is wider, the interval is Bonett-Price's on the differences' own
    cluster design (`paired_fallback`).
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
