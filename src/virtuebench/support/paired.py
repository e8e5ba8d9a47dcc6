"""The paired randomization test over clusters: under no difference between two arms, swapping the arms of every
item of one video together is as likely as not, so each video's summed difference d_i flips sign at random and
the statistic |sum_i d_i| is compared with its distribution over the 2^k sign patterns of the k videos whose
d_i is not 0 (a video with d_i = 0 contributes nothing whichever its sign). docs/statistics.md states the
p-value's definition.

The p-value is exact wherever the patterns can be counted:
- integer differences (0/1 items, as in results/comparisons.csv), any number of videos: the statistic's
  distribution is the convolution of each video's two-point distribution, grouped by |d_i| (a binomial per
  value), which counts every one of the 2^k patterns without listing them: in Python integers up to
  EXACT_FRACTION_MAX_VIDEOS videos, so the p-value is kept as a fraction (count / 2^k, `SignFlipTest.p_exact`), in
  floating point beyond (within 4e-13 of the integer count, relative, on the paper-scale benchmark's rows);
- other differences on at most ENUMERATE_MAX_VIDEOS videos: every pattern listed, as rows of a bit matrix in chunks,
  and counted (a fraction too).
Beyond that, a seeded Monte Carlo sample of patterns, with the p-value's Monte Carlo standard error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

import numpy as np

#: Non-integer differences on at most this many nonzero videos are tested exactly by listing every sign pattern
#: (half of 2^20 by symmetry, in chunks of 2^16 rows): beyond it, Monte Carlo.
ENUMERATE_MAX_VIDEOS = 20
#: Integer differences on at most this many nonzero videos are counted in Python integers, so that the p-value is
#: kept as the exact fraction count / 2^k through Holm's adjustment (virtuebench.comparisons). 128 videos take about
#: a millisecond, 700 take 30-50 ms (numbers of 2^k's size, on 2 cores), so beyond it the counts run in floating point.
EXACT_FRACTION_MAX_VIDEOS = 128
#: Monte Carlo patterns beyond the cut: the p-value's standard error near 0.05 is then sqrt(0.05 * 0.95 / 20000),
#: 0.0015, so a p-value within two errors of 0.05 (0.047-0.053) is flagged (results/comparisons.csv `near_alpha`).
MONTE_CARLO_DRAWS = 20_000
_CHUNK_ROWS = 1 << 16
PValue = Literal["conventional", "mid-p"]
P_VALUES: tuple[PValue, ...] = ("conventional", "mid-p")


@dataclass(frozen=True)
class SignFlipTest:
    """The paired test's result: `p_value` (two-sided), `p_mc_se` (its Monte Carlo standard error, 0 where
    exact), `method` ("exact" or "monte-carlo"), `n_discordant` (k: the videos with a nonzero summed difference),
    `p_min`, the smallest p-value the test could give on these videos (its 2 of 2^k patterns, or 1 of 2^k as a
    mid-p, where every video's difference has the same sign), for Holm's family (Tarone), and `p_exact`: the
    p-value as the fraction it is where its patterns were counted in integers (`p_value` is its nearest float);
    None where they were not (Monte Carlo, or integer differences on more than EXACT_FRACTION_MAX_VIDEOS videos)."""

    p_value: float
    p_mc_se: float
    method: str
    n_discordant: int
    p_min: float
    p_exact: Fraction | None = None


def smallest_p(n_discordant: int, p_value: PValue = "conventional") -> float:
    """The smallest p-value the test can give with `n_discordant` nonzero videos: only the two patterns of all
    one sign reach the largest |sum|, so 2/2^k (conventional) or 1/2^k (mid-p, which counts the tie half); 1
    with no nonzero video."""
    if n_discordant == 0:
        return 1.0
    return min(1.0, (2.0 if p_value == "conventional" else 1.0) * 0.5**n_discordant)


def sign_flip_test(
    video_sums: np.ndarray | list[float],
    rng: np.random.Generator | None = None,
    p_value: PValue = "conventional",
    draws: int = MONTE_CARLO_DRAWS,
) -> SignFlipTest:
    """The two-sided paired randomization test of `video_sums` (each video's summed difference a - b).

    Conventional: p = P(|S| >= |s|) over the sign patterns (the observed pattern among them), a valid p-value
    (P(p <= alpha) <= alpha under no difference). Mid-p: P(|S| > |s|) + P(|S| = |s|) / 2. `rng` seeds the Monte
    Carlo sample (needed only beyond the exact cases); it estimates p as (b + 1) / (draws + 1), b the sampled
    patterns at least as extreme (mid-p: ties and the observed one count half), so the estimate is never 0."""
    if p_value not in P_VALUES:
        raise ValueError(f"report.p_value: {p_value!r} is not one of {', '.join(P_VALUES)}")
    sums = np.asarray(video_sums, dtype=float)
    nonzero = sums[sums != 0]
    k = len(nonzero)
    p_min = smallest_p(k, p_value)
    if k == 0:
        return SignFlipTest(1.0, 0.0, "exact", 0, p_min, Fraction(1))
    observed = abs(float(nonzero.sum()))
    magnitudes = np.abs(nonzero)
    integer = bool(np.all(magnitudes == np.round(magnitudes))) and magnitudes.sum() < 2**31
    if integer and k <= EXACT_FRACTION_MAX_VIDEOS:
        beyond_count, tied_count = _counted_integer(magnitudes.astype(np.int64), int(round(observed)))
        return _counted(beyond_count, tied_count, 1 << k, k, p_min, p_value)
    if integer:
        beyond, tied = _exact_integer(magnitudes.astype(np.int64), int(round(observed)))
        method, se = "exact", 0.0
        found = beyond + (0.5 if p_value == "mid-p" else 1.0) * tied
    elif k <= ENUMERATE_MAX_VIDEOS:
        beyond_count, tied_count = _exact_listed(magnitudes, observed)
        return _counted(beyond_count, tied_count, 1 << (k - 1), k, p_min, p_value)
    else:
        if rng is None:
            raise ValueError(f"a Monte Carlo sign-flip test ({k} nonzero videos, non-integer differences) needs a seeded generator")
        beyond_count, tied_count = _sampled(magnitudes, observed, rng, draws)
        weight = 0.5 if p_value == "mid-p" else 1.0
        # the observed pattern is one of draws + 1 and ties with itself
        found = (beyond_count + weight * (tied_count + 1)) / (draws + 1)
        method, se = "monte-carlo", float(np.sqrt(found * (1 - found) / draws))
    return SignFlipTest(float(min(1.0, max(found, p_min))), se, method, k, p_min)


def _counted(beyond: int, tied: int, patterns: int, k: int, p_min: float, p_value: PValue) -> SignFlipTest:
    """The exact test's result from its counts: `beyond` and `tied` of `patterns` sign patterns give |S| beyond and
    level with the observed one. The p-value is kept as a fraction (a mid-p counts the ties half)."""
    share = Fraction(2 * beyond + tied, 2 * patterns) if p_value == "mid-p" else Fraction(beyond + tied, patterns)
    exact = min(Fraction(1), max(share, Fraction(p_min)))  # counted, the share is never below p_min (the mirror ties)
    return SignFlipTest(float(exact), 0.0, "exact", k, p_min, exact)


def _tolerance(magnitudes: np.ndarray) -> float:
    # sums of floats in another order differ in the last bits: equal within this counts as a tie
    return 1e-9 * max(1.0, float(magnitudes.sum()))


def _binomial_half(count: int) -> np.ndarray:
    """P(J = j), j = 0..count, J ~ Binomial(count, 1/2), from log C(count, j) built up term by term."""
    j = np.arange(1, count + 1)
    log_choose = np.concatenate(([0.0], np.cumsum(np.log((count - j + 1) / j))))
    return np.exp(log_choose - count * np.log(2.0))


def _exact_integer(magnitudes: np.ndarray, observed: int) -> tuple[float, float]:
    """P(|S| > s) and P(|S| = s) for S = sum of +-|d_i| (integers), s = `observed` >= 0. U, the sum of the
    |d_i| signed +, is S's half-shift: S = 2U - total. Videos sharing a value a add a * Binomial(c, 1/2) to U;
    the classes are convolved (non-negative terms: no cancellation, each probability to about 1e-13)."""
    values, counts = np.unique(magnitudes, return_counts=True)
    order = np.argsort(-counts)  # start from the largest class: fewer, shorter convolutions
    pmf = np.array([1.0])
    for value, count in zip(values[order], counts[order]):
        kernel = np.zeros(int(value) * int(count) + 1)
        kernel[:: int(value)] = _binomial_half(int(count))
        pmf = kernel if len(pmf) == 1 else np.convolve(pmf, kernel)
    total = int(magnitudes.sum())
    if observed == 0:  # every pattern is at least as extreme; those with S = 0 tie
        tied = float(pmf[total // 2]) if total % 2 == 0 else 0.0
        return 1.0 - tied, tied
    upper = (total + observed) // 2  # U of S = +s; S = -s is U = total - upper, as likely by symmetry
    tied = 2.0 * float(pmf[upper])
    beyond = 2.0 * float(pmf[upper + 1 :].sum())
    return beyond, tied


def _counted_integer(magnitudes: np.ndarray, observed: int) -> tuple[int, int]:
    """#{|S| > s} and #{|S| = s} among the 2^k sign patterns, in Python integers: `_exact_integer`'s convolution with
    each class's binomial coefficients (math.comb) in place of its probabilities, so that nothing is rounded."""
    values, counts = np.unique(magnitudes, return_counts=True)
    ways = np.array([1], dtype=object)  # ways[u]: how many patterns have their + signs summing to u
    for value, count in zip(values.tolist(), counts.tolist()):
        kernel = np.zeros(value * count + 1, dtype=object)  # an object array's zeros are the integer 0
        kernel[::value] = [math.comb(count, j) for j in range(count + 1)]
        ways = np.convolve(ways, kernel)
    total = int(magnitudes.sum())
    if observed == 0:  # every pattern is at least as extreme; those with S = 0 tie
        tied = int(ways[total // 2]) if total % 2 == 0 else 0
        return (1 << len(magnitudes)) - tied, tied
    upper = (total + observed) // 2  # as in _exact_integer; S = +s and S = -s are as many by symmetry
    return 2 * int(ways[upper + 1 :].sum()), 2 * int(ways[upper])


def _exact_listed(magnitudes: np.ndarray, observed: float) -> tuple[int, int]:
    """#{|S| > s} and #{|S| = s} among the 2^(k-1) sign patterns listed: pattern r's bit i is video i's sign. A
    pattern and its mirror (every sign flipped) give the same |S|, so the half with the last video's sign + is listed."""
    k = len(magnitudes)
    half = 1 << (k - 1)
    tolerance = _tolerance(magnitudes)
    shifts = np.arange(k, dtype=np.int64)
    beyond = tied = 0
    for start in range(0, half, _CHUNK_ROWS):
        rows = np.arange(start, min(start + _CHUNK_ROWS, half), dtype=np.int64)
        signs = 1.0 - 2.0 * ((rows[:, None] >> shifts) & 1)  # bit k - 1 is 0: the last video's sign is +
        statistic = np.abs(signs @ magnitudes)
        beyond += int(np.count_nonzero(statistic > observed + tolerance))
        tied += int(np.count_nonzero(np.abs(statistic - observed) <= tolerance))
    return beyond, tied


def _sampled(magnitudes: np.ndarray, observed: float, rng: np.random.Generator, draws: int) -> tuple[int, int]:
    """How many of `draws` random sign patterns give |S| beyond, and level with, `observed`."""
    tolerance = _tolerance(magnitudes)
    beyond = tied = 0
    chunk = max(1, _CHUNK_ROWS // max(1, len(magnitudes) // 16))
    for start in range(0, draws, chunk):
        size = min(chunk, draws - start)
        signs = 1.0 - 2.0 * rng.integers(0, 2, size=(size, len(magnitudes)), dtype=np.int8)
        statistic = np.abs(signs @ magnitudes)
        beyond += int(np.count_nonzero(statistic > observed + tolerance))
        tied += int(np.count_nonzero(np.abs(statistic - observed) <= tolerance))
    return beyond, tied
