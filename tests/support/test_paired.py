"""The paired sign-flip test (virtuebench.support.paired) against an independent brute-force enumeration, scipy's
permutation test where scipy is installed, and worked cases."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from virtuebench.support.paired import (
    ENUMERATE_MAX_VIDEOS,
    EXACT_FRACTION_MAX_VIDEOS,
    _counted_integer,
    _exact_integer,
    sign_flip_test,
    smallest_p,
)


def _brute_force_fraction(sums, mid_p: bool) -> Fraction:
    """Every sign pattern of the nonzero sums, in exact arithmetic: the share with |S| beyond |s| (ties count in
    full, or half as a mid-p)."""
    values = [Fraction(x).limit_denominator(10**6) for x in sums if x != 0]
    if not values:
        return Fraction(1)
    observed = abs(sum(values))
    beyond = tied = 0
    for signs in itertools.product((1, -1), repeat=len(values)):
        statistic = abs(sum(sign * value for sign, value in zip(signs, values)))
        beyond += statistic > observed
        tied += statistic == observed
    return (beyond + Fraction(1, 2 if mid_p else 1) * tied) / 2 ** len(values)


def _brute_force(sums, mid_p: bool) -> float:
    return float(_brute_force_fraction(sums, mid_p))


def test_the_oracle_refusal_row_all_twelve_videos_one_way_is_2_in_4096():
    """Honest against plain at 64 frames, refusal subset, in the demo: every one of the 12 videos favours honest.
    Only the two patterns of one sign reach that |sum|: conventional 2/4096, mid-p (the tie counted half) 1/4096."""
    video_sums = [1, 2, 1, 1, 3, 1, 1, 2, 1, 1, 1, 2]
    conventional = sign_flip_test(video_sums)
    assert conventional.p_value == pytest.approx(2 / 4096, rel=1e-12) and conventional.p_min == 2 / 4096
    assert (conventional.method, conventional.p_mc_se, conventional.n_discordant) == ("exact", 0.0, 12)
    assert sign_flip_test(video_sums, p_value="mid-p").p_value == pytest.approx(1 / 4096, rel=1e-12)
    assert _brute_force(video_sums, False) == 2 / 4096 and _brute_force(video_sums, True) == 1 / 4096


def test_exact_p_values_match_a_brute_force_enumeration():
    """Integer sums (the convolution) and non-integer ones (the listed bit matrix), zeros among them, both
    definitions: the same p-value as listing every pattern with itertools.product, to 1e-12."""
    rng = np.random.default_rng(37)
    cases = [list(rng.integers(-3, 4, size=int(rng.integers(1, 12)))) for _ in range(60)]
    cases += [list(np.round(rng.normal(0.3, 1, size=int(rng.integers(1, 11))), 2)) for _ in range(30)]
    cases += [[0, 0, 0], [1, -1], [2, -1, -1], [0.5, -0.25, -0.25, 1.5], [1] * 5, [3, -3, 3, -3, 0]]
    for sums in cases:
        for definition in ("conventional", "mid-p"):
            found = sign_flip_test(sums, p_value=definition)
            expected = _brute_force_fraction(sums, definition == "mid-p")
            assert found.method == "exact" and found.p_exact == expected and found.p_value == float(expected), sums
            assert found.n_discordant == sum(x != 0 for x in sums)


def test_zero_videos_contribute_nothing_and_no_discordant_video_is_p_one():
    assert sign_flip_test([2, 0, -1, 0, 3]).p_value == pytest.approx(sign_flip_test([2, -1, 3]).p_value)
    none = sign_flip_test([0, 0, 0])
    assert (none.p_value, none.p_min, none.n_discordant) == (1.0, 1.0, 0)
    assert sign_flip_test([1, -1]).p_value == 1.0  # S = 0: every pattern at least as extreme


def test_many_videos_are_exact_when_the_differences_are_integers_and_agree_with_the_listed_patterns():
    rng = np.random.default_rng(5)
    sums = rng.integers(-2, 3, size=ENUMERATE_MAX_VIDEOS)
    sums[sums == 0] = 1
    sums[:12] = 2  # a lean towards a: p well inside (0, 1)
    as_integers = sign_flip_test(sums)
    listed = sign_flip_test(sums + 1e-12 * np.arange(len(sums)))  # not integers: every pattern listed
    assert (as_integers.method, listed.method) == ("exact", "exact")
    assert as_integers.p_value == pytest.approx(listed.p_value, abs=1e-9) and 0.001 < as_integers.p_value < 0.5
    big = sign_flip_test(rng.integers(-3, 4, size=900))  # 900 videos, exact in well under a second
    assert big.method == "exact" and 0 < big.p_value <= 1 and big.p_mc_se == 0.0


def test_beyond_the_cut_non_integer_differences_are_sampled_seeded_with_their_error():
    rng = np.random.default_rng(11)
    integers = rng.integers(-2, 3, size=40)
    integers[:8] = 2
    exact = sign_flip_test(integers).p_value
    scaled = integers * 0.37  # the same test on a non-integer scale: the same exact p, now sampled
    sampled = sign_flip_test(scaled, np.random.default_rng(0))
    assert sampled.method == "monte-carlo" and sampled.p_mc_se > 0
    assert abs(sampled.p_value - exact) < 4 * sampled.p_mc_se
    assert sampled.p_mc_se == pytest.approx((sampled.p_value * (1 - sampled.p_value) / 20_000) ** 0.5)
    assert sign_flip_test(scaled, np.random.default_rng(0)) == sampled  # seeded: the same digits on a rerun
    with pytest.raises(ValueError, match="needs a seeded generator"):
        sign_flip_test(scaled)
    with pytest.raises(ValueError, match="report.p_value: 'exactish' is not one of conventional, mid-p"):
        sign_flip_test([1], p_value="exactish")  # type: ignore[arg-type]


def test_the_smallest_attainable_p_value():
    assert [smallest_p(k) for k in (0, 1, 4, 5, 6)] == [1.0, 1.0, 0.125, 0.0625, 0.03125]
    assert [smallest_p(k, "mid-p") for k in (0, 1, 4, 5)] == [1.0, 0.5, 0.0625, 0.03125]
    for k in range(1, 9):  # the all-one-sign pattern reaches it
        assert sign_flip_test([1] * k).p_value == pytest.approx(smallest_p(k))


def test_scipy_permutation_test_gives_the_same_exact_p_values():
    """scipy.stats.permutation_test with permutation_type='samples' on paired data enumerates all 2^k sign
    patterns where there are few: its p-value (conventional) is ours. Skipped where scipy is not installed."""
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(3)
    for _ in range(20):
        k = int(rng.integers(2, 13))
        a = rng.integers(0, 4, size=k).astype(float)
        b = rng.integers(0, 4, size=k).astype(float)
        if np.all(a == b):
            continue
        nonzero = a != b  # scipy flips every pair; zero pairs change nothing, but they double its pattern count
        found = stats.permutation_test(
            (a[nonzero], b[nonzero]),
            lambda x, y: np.sum(x - y),
            permutation_type="samples",
            alternative="two-sided",
            n_resamples=np.inf,
        )
        assert sign_flip_test(a - b).p_value == pytest.approx(found.pvalue, abs=1e-12)


def test_integer_differences_are_fractions_up_to_the_cut_and_floats_to_13_digits_beyond():
    """Up to EXACT_FRACTION_MAX_VIDEOS videos the p-value is the count over 2^k itself (p_exact); beyond, the same
    convolution in floating point, which agrees with the integer count to 1e-12 (so 10 written digits are right)."""
    rng = np.random.default_rng(49)
    at_cut = rng.integers(1, 4, size=EXACT_FRACTION_MAX_VIDEOS) * rng.choice([-1, 1], size=EXACT_FRACTION_MAX_VIDEOS)
    counted = sign_flip_test(at_cut)
    ways = {0: 1}  # the distribution of S over every pattern, counted video by video (independently of the module)
    for d in at_cut.tolist():
        grown: dict[int, int] = {}
        for total, count in ways.items():
            grown[total + d] = grown.get(total + d, 0) + count
            grown[total - d] = grown.get(total - d, 0) + count
        ways = grown
    observed = abs(int(at_cut.sum()))
    assert counted.p_exact == Fraction(sum(c for total, c in ways.items() if abs(total) >= observed), 2**EXACT_FRACTION_MAX_VIDEOS)
    assert counted.p_value == float(counted.p_exact) and sign_flip_test([1] * 30).p_exact == Fraction(2, 2**30)
    for k in (EXACT_FRACTION_MAX_VIDEOS + 1, 400):
        sums = rng.integers(1, 4, size=k) * rng.choice([-1, 1], size=k)
        sums[: k // 4] = 3  # a lean towards a: p well inside (0, 1)
        beyond = sign_flip_test(sums)
        assert beyond.method == "exact" and beyond.p_exact is None
        magnitudes, observed = np.abs(sums).astype(np.int64), int(abs(sums.sum()))
        above, tied = _counted_integer(magnitudes, observed)
        exact = Fraction(above + tied, 2**k)
        assert abs(Fraction(beyond.p_value) - exact) < Fraction(1, 10**12) * exact and 0 < beyond.p_value < 0.5
        assert sum(_exact_integer(magnitudes, observed)) == pytest.approx(float(exact), rel=1e-12)
