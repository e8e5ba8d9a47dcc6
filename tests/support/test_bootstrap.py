"""The report's statistics (virtuebench.support.bootstrap) on simulated benchmarks with known truth."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers.intervals import intra_cluster_correlation, narrow_closed_forms
from scipy import stats

from virtuebench.support.bootstrap import (
    Bootstrap,
    Design,
    Interval,
    PairedNumber,
    Resampler,
    agresti_coull_mean,
    bell_mccaffrey_df,
    bonett_price_interval,
    bounded_mean_fallback,
    clopper_pearson_interval,
    cluster_design,
    cr2_variance,
    fallback_interval,
    holm,
    mean_interval,
    paired_difference,
    paired_fallback,
)

SETTINGS = Bootstrap(resamples=1000, seed=0)
Z = 1.959963984540054  # the standard normal's 97.5% quantile


def _n_star(n_eff: float, df: float) -> float:
    """Korn & Graubard's adjusted size, from scipy.stats' t quantile (the reference the module's stdtrit must match)."""
    return n_eff * (Z / stats.t.ppf(0.975, df)) ** 2


def _clopper_pearson_by_hand(share: float, n: float) -> tuple[float, float]:
    """scipy.stats.beta's quantiles at share * n of n right (the public function, not the module's betaincinv)."""
    right = share * n
    low = 0.0 if share <= 0 else stats.beta.ppf(0.025, right, n - right + 1)
    high = 1.0 if share >= 1 else stats.beta.ppf(0.975, right + 1, n - right)
    return low, high


def _benchmark(rng: np.random.Generator, n_videos: int, rate: float, concentration: float = 4.0):
    """Videos with 1-7 questions each; a video's own rate varies around `rate` (Beta), so items of one
    video are correlated as in VirtueBench. The expected item-level rate is exactly `rate`."""
    per_video = rng.integers(1, 8, size=n_videos)
    video_rate = rng.beta(rate * concentration, (1 - rate) * concentration, size=n_videos)
    clusters = np.repeat(np.arange(n_videos), per_video)
    return clusters, np.repeat(video_rate, per_video)


def test_the_95_percent_interval_covers_a_known_rate_93_to_97_percent_of_the_time():
    rng = np.random.default_rng(2026)
    covered, item_level_covered, simulations, rate = 0, 0, 1000, 0.6
    for run in range(simulations):
        clusters, p_item = _benchmark(rng, 50, rate)
        correct = rng.random(len(p_item)) < p_item
        low, high = mean_interval(clusters, correct, SETTINGS, ("coverage", run))
        covered += low <= rate <= high
        # The same data, resampling items as if they were independent: the interval is too narrow.
        low, high = mean_interval(np.arange(len(correct)), correct, SETTINGS, ("items", run))
        item_level_covered += low <= rate <= high
    print(f"\ncoverage by video {covered / simulations:.3f}, by item {item_level_covered / simulations:.3f}")
    # BCa, or the closed form where wider. No upper bound any more: at 50 videos of 1-7 items and ICC 0.2 the closed
    # form, which never counts more items than videos, is often the wider one and covers nearly always (99.8% here)
    assert covered / simulations >= 0.93
    assert item_level_covered / simulations < 0.90  # why the unit resampled is the video


def test_paired_p_value_is_uniform_under_no_difference():
    """The conventional p-value is valid (P(p <= q) <= q: the ties of a discrete test make it a little large), the
    mid-p about uniform (at 40 videos)."""
    rng = np.random.default_rng(7)
    conventional, mid = [], []
    for run in range(1000):
        clusters, p_item = _benchmark(rng, 40, 0.5, concentration=2.0)
        a, b = rng.random(len(p_item)) < p_item, rng.random(len(p_item)) < p_item  # two arms, same truth
        conventional.append(paired_difference(clusters, a, b, SETTINGS, ("null", run)).p_value)
        mid.append(Resampler(clusters, SETTINGS, ("k",)).paired(clusters, a, b, ("null", run), "mid-p").p_value)
    for name, p_values in (("conventional", conventional), ("mid-p", mid)):
        p_values = np.sort(np.array(p_values))
        shares = {q: float(np.mean(p_values <= q)) for q in (0.05, 0.1, 0.25, 0.5, 0.75)}
        ks = float(np.max(np.abs(np.arange(1, len(p_values) + 1) / len(p_values) - p_values)))
        print(f"\n{name}: share of p at or below q: {shares}; Kolmogorov-Smirnov distance {ks:.3f}")
        if name == "conventional":  # binomial noise on 1000 draws: 2 standard errors
            assert all(share <= q + 2 * (q * (1 - q) / 1000) ** 0.5 for q, share in shares.items()) and shares[0.05] >= 0.03
        else:
            assert 0.03 <= shares[0.05] <= 0.07 and 0.07 <= shares[0.1] <= 0.13 and 0.45 <= shares[0.5] <= 0.55
    assert ks < 0.06  # 1000 draws from a uniform: the 1% critical value is 0.052, plus the test's discreteness


def test_a_real_difference_is_found_and_its_interval_holds_it():
    """At 40 videos (158 items) the test finds the difference while the closed-form interval, which counts at most
    one pair a video, still reaches just below 0; at 60 videos the interval excludes 0 too."""
    for n_videos in (40, 60):
        rng = np.random.default_rng(3)
        clusters, p_item = _benchmark(rng, n_videos, 0.5)
        a = rng.random(len(p_item)) < np.clip(p_item + 0.3, 0, 1)
        b = rng.random(len(p_item)) < p_item
        result = paired_difference(clusters, a, b, SETTINGS, ("power",))
        assert result.difference == pytest.approx(a.mean() - b.mean())
        assert result.p_value < 0.01 and result.ci_low < result.difference < result.ci_high
        assert (result.n, result.n_clusters) == (len(a), n_videos)
        assert (result.ci_low > 0) == (n_videos == 60)


def test_intervals_are_seeded_per_number_and_one_video_gets_the_fallback(monkeypatch):
    # 100 videos of 1-7 items whose items agree. The closed forms are wider than BCa on every design tried since they
    # use Clopper-Pearson on n* (docs/statistics.md): here they are made to have no width, so BCa is chosen and the
    # seed shows; the one-video case below uses the real closed form
    narrow_closed_forms(monkeypatch)
    rng = np.random.default_rng(0)
    sizes = rng.integers(1, 8, size=100)
    clusters = list(np.repeat(np.arange(100), sizes))
    values = list(np.repeat(rng.random(100) < 0.3, sizes))
    assert Resampler(clusters, SETTINGS, ("m", "honest", "64", "overall")).interval(clusters, values).method == "bca"
    first = mean_interval(clusters, values, SETTINGS, ("m", "honest", "64", "overall"))
    assert first == mean_interval(clusters, values, SETTINGS, ("m", "honest", "64", "overall"))
    assert first != mean_interval(clusters, values, Bootstrap(resamples=1000, seed=1), ("m", "honest", "64", "overall"))
    # One video: every resample is that video, so the bootstrap says nothing, and nothing shows how videos vary: the
    # closed form counts the video as one item on 1 degree of freedom, n* = (z / t_1)^2 = 0.024 items, nearly [0, 1]
    monkeypatch.undo()
    alone = Resampler(["v"], SETTINGS, ("one",)).interval(["v"] * 5, [1, 0, 1, 1, 0])
    assert alone.method == "clopper-pearson-cr2" and (alone.low, alone.high) == pytest.approx(_clopper_pearson_by_hand(0.6, _n_star(1, 1)))
    assert alone.low < 0.02 and alone.high > 0.98


def _agresti_coull(successes: float, n: float) -> tuple[float, float]:
    """Agresti & Coull (1998): add z^2/2 successes and z^2/2 failures, then the Wald interval."""
    centre = (successes + Z * Z / 2) / (n + Z * Z)
    half = Z * np.sqrt(centre * (1 - centre) / (n + Z * Z))
    return max(0.0, centre - half), min(1.0, centre + half)


def test_an_all_right_or_all_wrong_subset_gets_an_interval_that_does_not_collapse():
    """Closed forms where every value is the same (no variance to estimate): each video counts as one item, n_eff =
    the number of videos, on the sizes' degrees of freedom (5 equal videos: 4): Clopper-Pearson at 1 is
    [(alpha/2)^(1/n*), 1]. The same items on unequal videos have fewer degrees of freedom: a wider interval."""
    clusters = [v for v in range(5) for _ in range(4)]  # 5 videos, 20 items
    n_star = _n_star(5, 4)
    right = Resampler(clusters, SETTINGS, ("k",)).interval(clusters, [1] * 20)
    assert right.method == "clopper-pearson-cr2" and (right.low, right.high) == (pytest.approx(0.025 ** (1 / n_star)), 1.0)
    wrong = Resampler(clusters, SETTINGS, ("k",)).interval(clusters, [0] * 20)
    assert wrong.low == 0.0 and wrong.high == pytest.approx(1 - 0.025 ** (1 / n_star))
    lopsided = [0] * 16 + [1, 2, 3, 4]  # one video holds 16 of the 20 items
    assert Resampler(lopsided, SETTINGS, ("k",)).interval(lopsided, [1] * 20).low < right.low
    # a trust score of 100 (values in [-1, 1], only at the ends): Agresti-Coull on the share, mapped to the range
    trust = Resampler(clusters, SETTINGS, ("k",)).interval(clusters, [1.0] * 20, bounds=(-1.0, 1.0))
    low, high = _agresti_coull(n_star, n_star)
    assert trust.method == "agresti-coull-cr2" and (trust.low, trust.high) == pytest.approx((-1 + 2 * low, -1 + 2 * high))


def test_the_trust_fallback_is_a_sound_interval_for_a_three_valued_mean():
    """Kalai's item scores (1, 0, -1), independent items: the fallback alone covers the true mean at least 93% of
    the time (95% less three Monte Carlo standard errors) where the bootstrap tends to collapse (a mean near an
    end, or nearly every item refused), uses the values' own variance (narrower than a binary interval on the
    share where most items score 0) and never has zero width."""
    rng = np.random.default_rng(11)
    for probabilities in ((0.97, 0.02, 0.01), (0.9, 0.08, 0.02), (0.02, 0.96, 0.02), (0.3, 0.0, 0.7)):
        truth = probabilities[0] - probabilities[2]
        for n in (10, 30):
            covered = 0
            for _ in range(1000):
                values = rng.choice([1.0, 0.0, -1.0], p=probabilities, size=n)
                found = bounded_mean_fallback(values, (-1.0, 1.0), [1] * n, values)  # one item a video
                covered += found.low <= truth <= found.high
            assert covered / 1000 >= 0.93, (probabilities, n, covered)
    refused = bounded_mean_fallback([0.0] * 30, (-1.0, 1.0), [1] * 30, [0.0] * 30)
    n_star = _n_star(30, 29)  # every value the same: the 30 videos count once each, on 29 degrees of freedom
    expected = agresti_coull_mean([0.0] * 30, (-1.0, 1.0), n_star)
    assert refused.method == expected.method and (refused.low, refused.high) == pytest.approx((expected.low, expected.high))
    binary = _agresti_coull(n_star / 2, n_star)  # as many items at the share's middle as if each were right or wrong
    assert -1 + 2 * binary[0] < refused.low < 0 < refused.high < -1 + 2 * binary[1]
    for value in (-1.0, 0.0, 0.5, 1.0):
        found = bounded_mean_fallback([value] * 12, (-1.0, 1.0), [3] * 4, [3 * value] * 4)
        assert -1.0 <= found.low < found.high <= 1.0 and found.low <= value <= found.high


def test_the_paired_fallback_is_bonett_price_where_the_bootstrap_collapses():
    clusters = [v for v in range(12) for _ in range(5)]  # 12 videos, 60 items
    same = [i % 3 == 0 for i in range(60)]
    identical = Resampler(clusters, SETTINGS, ("k",)).paired(clusters, same, same, ("identical",))
    # no discordant item (no variance): the 12 videos count once each, on 11 degrees of freedom; Bonett-Price's
    # pseudo-items give discordant shares 1/(n*+2) each, a difference of 0 and half-width z sqrt(2) / (n*+2)
    n_star = _n_star(12, 11)
    half = Z * np.sqrt(2) / (n_star + 2)
    assert identical.ci_method == "bonett-price-cr2" and (identical.ci_low, identical.ci_high) == pytest.approx((-half, half))
    assert identical.p_value == 1.0
    # every item right under a and wrong under b: every resample gives 1; every difference 1, no variance: n* as above
    always = Resampler(clusters, SETTINGS, ("k",)).paired(clusters, [1] * 60, [0] * 60, ("always",))
    share_a, share_b = (n_star + 1) / (n_star + 2), 1 / (n_star + 2)
    centre, spread = share_a - share_b, Z * np.sqrt((share_a + share_b - (share_a - share_b) ** 2) / (n_star + 2))
    assert always.ci_method == "bonett-price-cr2" and always.ci_low == pytest.approx(centre - spread) and always.ci_high == 1.0
    # one video: the fallback too
    alone = Resampler(["v"], SETTINGS, ("k",)).paired(["v"] * 10, [1, 0] * 5, [0, 0] * 5, ("alone",))
    assert alone.ci_method == "bonett-price-cr2" and alone.ci_low < alone.difference < alone.ci_high
    with pytest.raises(ValueError, match=r"within \[0, 1\]"):
        paired_fallback([1.5], [0.0], [1], [1.5])
    # a sampled model's per-item means: each difference counts as that much of a discordant item, which for 0/1 arms is
    # the count of discordant items, and elsewhere a variance no smaller than the differences' own
    means = bonett_price_interval([2 / 3, 1 / 3, 1.0, 0.0], [0.0, 1.0, 1.0, 0.0], 4)
    counted = bonett_price_interval([1, 0, 1, 0], [0, 1, 1, 0], 4)
    assert paired_fallback([1.0, 0.0], [0.0, 0.0], [1, 1], [1.0, 0.0]) == paired_fallback([1, 0], [0, 0], [1, 1], [1, 0])
    assert means.method == counted.method == "bonett-price-cr2"
    share = (2 / 3 + 1) / 6  # 2/3 of a discordant item each way, one pseudo-item each, on 4 + 2 items
    assert (means.low, means.high) == pytest.approx((-Z * np.sqrt(2 * share / 6), Z * np.sqrt(2 * share / 6)))


def test_the_paired_fallback_matches_a_published_bonett_price_interval():
    """statpsych's ci.prop.ps(.05, f00=12, f01=4, f10=26, f11=6) documents the interval [0.2548067, 0.6251933]
    (Bonett & Price 2012): the interval on 48 pairs reproduces it. One pair a video, the closed form's CR2 variance
    is the usual s2 / (n - 1), so it uses 47 effective pairs on 47 degrees of freedom."""
    a = [0] * 12 + [0] * 4 + [1] * 26 + [1] * 6
    b = [0] * 12 + [1] * 4 + [0] * 26 + [1] * 6
    found = bonett_price_interval(a, b, 48)
    assert (found.low, found.high) == pytest.approx((0.2548067, 0.6251933), abs=1e-6)
    singletons = paired_fallback(a, b, [1] * 48, np.subtract(a, b))
    by_hand = bonett_price_interval(a, b, _n_star(47, 47))
    assert (singletons.low, singletons.high) == pytest.approx((by_hand.low, by_hand.high))


def test_the_paired_fallback_covers_a_known_difference():
    """Independent pairs, with rare discordance (where the paired bootstrap collapses) or common: coverage at least
    93% (95% less three Monte Carlo standard errors)."""
    rng = np.random.default_rng(12)
    for only_a, only_b in ((0.0, 0.0), (0.03, 0.0), (0.05, 0.02), (0.3, 0.3)):
        for n in (10, 40):
            covered = 0
            for _ in range(1000):
                cell = rng.choice(4, p=[only_a, only_b, (1 - only_a - only_b) / 2, (1 - only_a - only_b) / 2], size=n)
                a, b = np.isin(cell, (0, 2)).astype(float), np.isin(cell, (1, 2)).astype(float)
                found = paired_fallback(a, b, [1] * n, a - b)  # one pair a video
                covered += found.low <= only_a - only_b <= found.high
            assert covered / 1000 >= 0.93, (only_a, only_b, n, covered)


def test_a_subset_is_resampled_over_its_own_videos_whatever_the_rest_of_the_benchmark():
    clusters = [v for v in range(6) for _ in range(3)]
    values = [(v + i) % 2 for v in range(6) for i in range(3)]
    small = Resampler(clusters, SETTINGS, ("judge", "videos")).interval(clusters, values)
    inside = Resampler([*clusters, *range(100, 1000)], SETTINGS, ("judge", "videos")).interval(clusters, values)
    assert small == inside  # the same videos, the same resamples: the other 900 videos change nothing


def test_the_intra_video_correlation_is_the_anova_estimate():
    # two videos all right, two all wrong: items within a video agree perfectly
    assert intra_cluster_correlation([([0, 0, 1, 1, 2, 2, 3, 3], [1, 1, 1, 1, 0, 0, 0, 0])]) == 1.0
    # values alternate within every video and every video has the same mean: no video effect
    # values alternate within every video and every video has the same mean: no video effect (negative: the
    # items of a video differ more than chance would make them)
    assert intra_cluster_correlation([([0, 0, 1, 1, 2, 2], [1, 0, 1, 0, 0, 1])]) < 0
    assert np.isnan(intra_cluster_correlation([([0, 0], [1, 0])]))  # one video: not estimable


def test_holm_adjusts_step_down_and_keeps_missing_values():
    assert holm([0.01, 0.04, None, 0.03]) == pytest.approx([0.03, 0.06, None, 0.06])
    assert holm([0.5, 0.9]) == [1.0, 1.0]
    with pytest.raises(ValueError, match="resamples"):
        Bootstrap(resamples=0)


# ---- fast checks worked by hand (the two calibration tests above are the slow ones; `make mutation` runs these)


def test_the_intra_video_correlation_worked_by_hand():
    # videos a: 1 1, b: 0 0, c: 1 0; mean 1/2, video means 1, 0, 1/2: SSB = 2(1/4) + 2(1/4) + 0 = 1 on 2 df,
    # SSW = 1/2 on 3 df, m0 = (6 - 12/6) / 2 = 2; rho = (1/2 - 1/6) / (1/2 + 1/6) = 1/2
    one = (["a", "a", "b", "b", "c", "c"], [1, 1, 0, 0, 1, 0])
    assert intra_cluster_correlation([one]) == pytest.approx(0.5)
    # pooled with d: 1 1, e: 0 0 (SSB 1 on 1 df, SSW 0 on 2 df, m0 sum 2): MSB 2/3, MSW 1/10, m0 2: rho 17/23
    assert intra_cluster_correlation([one, (["d", "d", "e", "e"], [1, 1, 0, 0])]) == pytest.approx(17 / 23)
    # groups that cannot be estimated are left out of the pool: one video, or one item per video
    skipped = [(["x", "x"], [1, 0]), (["p", "q", "r"], [1, 0, 1])]
    assert intra_cluster_correlation([one, *skipped]) == pytest.approx(0.5)
    assert np.isnan(intra_cluster_correlation(skipped)) and np.isnan(intra_cluster_correlation([]))
    # every value equal: no variance at all, nothing to estimate (not 0/0)
    assert np.isnan(intra_cluster_correlation([(["a", "a", "b", "b"], [1, 1, 1, 1])]))
    # within-video spread larger than between: MSB 0, MSW 1/2, m0 2: (0 - 1/2) / (0 + 1/2) = -1, kept negative
    assert intra_cluster_correlation([(["a", "a", "b", "b"], [1, 0, 1, 0])]) == pytest.approx(-1.0)


def test_the_cluster_design_worked_by_hand():
    # videos of 1 and 3 items, value sums 1 and 1: mean 1/2, residuals 1/2 and -1/2, leverages 1/4 and 3/4:
    # V = (1/4 / (3/4) + 1/4 / (1/4)) / 4^2 = 1/12; s2 = 1/4, s2 / V = 3, more than the 2 videos: n_eff 2
    assert cr2_variance(np.array([1.0, 3.0]), np.array([1.0, 1.0])) == pytest.approx(1 / 12)
    assert cluster_design([1, 3], [1, 1], 0.25) == Design(2.0, 1.0)  # two videos: one degree of freedom
    # three videos of 2, sums 2, 2, 0: mean 2/3, residuals 2/3, 2/3, -4/3, leverage 1/3: V = (24/9) (3/2) / 36 = 1/9,
    # s2 = 2/9: n_eff = 2 (below the 3 videos); equal sizes: df = G - 1 = 2
    assert cluster_design([2, 2, 2], [2, 2, 0], 2 / 9) == Design(pytest.approx(2.0), pytest.approx(2.0))
    # sums 1, 1, 2: V = (1/9 + 1/9 + 4/9) (3/2) / 36 = 1/36, s2 / V = 8: the 3 videos cap it
    assert cluster_design([2, 2, 2], [1, 1, 2], 2 / 9).effective_items == 3.0
    # no variance (every value the same) or none between videos: each video one item; one video: 1 item, 1 df
    assert cluster_design([2, 2, 2], [2, 2, 2], 0.0).effective_items == 3.0
    assert cluster_design([2, 2], [1, 1], 0.25).effective_items == 2.0
    assert cluster_design([5], [3], 0.24) == Design(1.0, 1.0) and cluster_design([0, 5], [0, 3], 0.24) == Design(1.0, 1.0)
    # degrees of freedom: G - 1 for equal sizes, far fewer where one video holds half the items
    assert bell_mccaffrey_df(np.full(10, 3.0)) == pytest.approx(9.0)
    assert 2 < bell_mccaffrey_df(np.array([25.0, 10, 5, 3, 2, 1, 1, 1, 1, 1])) < 3
    assert bell_mccaffrey_df(np.array([4.0])) == 1.0
    # n* = n_eff (z / t_df)^2, scipy's t quantile
    assert Design(2.0, 2.0).adjusted_items() == pytest.approx(2 * (Z / 4.302652729911275) ** 2)


def test_the_fallback_interval_worked_by_hand():
    # all right on 2 videos of 2: n_eff 2 on 1 degree of freedom; Clopper-Pearson's lower end solves p^n* = 0.025
    n_star = _n_star(2, 1)
    assert fallback_interval([2, 2], [2, 2]) == Interval(pytest.approx(0.025 ** (1 / n_star)), 1.0, "clopper-pearson-cr2")
    assert fallback_interval([2, 2], [0, 0]) == Interval(0.0, pytest.approx(1 - 0.025 ** (1 / n_star)), "clopper-pearson-cr2")
    # 2/3 right, videos 2, 2, 0 right of 2 (n_eff 2, df 2: test_the_cluster_design_worked_by_hand): Clopper-Pearson on n*
    found = fallback_interval([2, 2, 2], [2, 2, 0])
    assert found.method == "clopper-pearson-cr2" and (found.low, found.high) == pytest.approx(
        _clopper_pearson_by_hand(2 / 3, _n_star(2, 2))
    )
    # 2 of 8 right: the exact binomial interval, each end's tail 2.5% (as R's binom.test(2, 8): 0.0319, 0.6509)
    quarter = clopper_pearson_interval(0.25, 8)
    assert (quarter.low, quarter.high, quarter.method) == (
        pytest.approx(0.0319, abs=1e-4),
        pytest.approx(0.6509, abs=1e-4),
        "clopper-pearson-cr2",
    )
    assert sum(math.comb(8, k) * quarter.high**k * (1 - quarter.high) ** (8 - k) for k in range(3)) == pytest.approx(0.025)
    assert sum(math.comb(8, k) * quarter.low**k * (1 - quarter.low) ** (8 - k) for k in range(2, 9)) == pytest.approx(0.025)
    assert clopper_pearson_interval(1.0, 3).low == pytest.approx(0.025 ** (1 / 3)) and clopper_pearson_interval(
        0.0, 3
    ).high == pytest.approx(1 - 0.025 ** (1 / 3))
    narrower = fallback_interval([2, 2, 2], [2, 2, 0], confidence=0.5)  # a lower confidence, a narrower interval
    assert found.low < narrower.low < narrower.high < found.high
    expected = clopper_pearson_interval(2 / 3, 2 * (NORMAL_50 / stats.t.ppf(0.75, 2)) ** 2, confidence=0.5)
    assert (narrower.low, narrower.high) == pytest.approx((expected.low, expected.high))


NORMAL_50 = 0.6744897501960817  # the standard normal's 75% quantile


def test_the_cr2_variance_is_the_bias_reduced_sandwich_from_the_hat_matrix():
    """Bell & McCaffrey's CR2: (X'X)^-1 sum_g X_g' A_g e_g e_g' A_g X_g (X'X)^-1, A_g = (I - H_gg)^(-1/2), built
    from explicit matrices for an intercept-only model, equals the closed form on random unequal videos."""
    rng = np.random.default_rng(49)
    for _ in range(20):
        sizes = rng.integers(1, 9, size=int(rng.integers(2, 12)))
        clusters = np.repeat(np.arange(len(sizes)), sizes)
        values = rng.random(len(clusters)) < rng.beta(1, 1, size=len(sizes))[clusters]
        n = len(clusters)
        design = np.ones((n, 1))
        bread = np.linalg.inv(design.T @ design)
        hat = design @ bread @ design.T
        residuals = values - hat @ values
        meat = np.zeros((1, 1))
        for video in range(len(sizes)):
            at = np.flatnonzero(clusters == video)
            eigenvalues, vectors = np.linalg.eigh(np.eye(len(at)) - hat[np.ix_(at, at)])
            adjust = vectors @ np.diag(eigenvalues**-0.5) @ vectors.T
            score = design[at].T @ adjust @ residuals[at]
            meat += np.outer(score, score)
        sandwich = float((bread @ meat @ bread)[0, 0])
        sums = np.bincount(clusters, weights=values.astype(float))
        assert cr2_variance(sizes.astype(float), sums) == pytest.approx(sandwich, rel=1e-9, abs=1e-15)


def test_the_degrees_of_freedom_are_bell_and_mccaffreys_from_explicit_matrices():
    """Imbens & Kolesar (2016): with G_g = (I - H)_{., g} A_g X_g (X'X)^-1, the columns of G, and lambda the eigenvalues
    of G'G (homoskedastic errors), df = (sum lambda)^2 / sum lambda^2; the closed form agrees on random unequal sizes."""
    rng = np.random.default_rng(7)
    for _ in range(20):
        sizes = rng.integers(1, 12, size=int(rng.integers(2, 15)))
        clusters = np.repeat(np.arange(len(sizes)), sizes)
        n = len(clusters)
        design = np.ones((n, 1))
        bread = np.linalg.inv(design.T @ design)
        residual_maker = np.eye(n) - design @ bread @ design.T
        columns = []
        for video in range(len(sizes)):
            at = np.flatnonzero(clusters == video)
            eigenvalues, vectors = np.linalg.eigh(residual_maker[np.ix_(at, at)])
            adjust = vectors @ np.diag(eigenvalues**-0.5) @ vectors.T
            columns.append(residual_maker[:, at] @ adjust @ design[at] @ bread)
        weights = np.hstack(columns)
        lambdas = np.linalg.eigvalsh(weights.T @ weights)
        assert bell_mccaffrey_df(sizes.astype(float)) == pytest.approx(max(1.0, lambdas.sum() ** 2 / (lambdas**2).sum()), rel=1e-9)


def test_the_t_quantile_is_scipys():
    for df in (1.0, 2.6, 9.0, 40.5, 1e4):
        for confidence in (0.95, 0.9):
            z = stats.norm.ppf(1 - (1 - confidence) / 2)
            expected = 7.0 * (z / stats.t.ppf(1 - (1 - confidence) / 2, df)) ** 2
            assert Design(7.0, df).adjusted_items(confidence) == pytest.approx(expected, rel=1e-12)


def _old_effective_items(clusters: np.ndarray, values: np.ndarray) -> float:
    """The design effect before issue 49, for comparison: Kish's n / (1 + (m - 1) rho) with the ANOVA rho where
    positive, the number of videos where it is 0, negative or unknown."""
    rho = intra_cluster_correlation([(clusters, values)])
    sizes = np.bincount(clusters).astype(float)
    n = sizes.sum()
    return n / (1 + ((sizes**2).sum() / n - 1) * rho) if rho > 0 else float(len(sizes))


def test_the_design_effect_has_no_jump_where_the_correlation_crosses_zero():
    """One flipped item takes the ANOVA rho from below 0 to above it: the old design effect jumped from the number
    of videos to nearly the number of items; n_eff stays at the number of videos. And along a continuous path of
    values on which rho crosses 0 and s2 / V crosses the number of videos, n_eff moves in small steps."""
    rng = np.random.default_rng(0)
    clusters = np.repeat(np.arange(20), 3)
    found = None
    for _ in range(200):
        values = (rng.random(60) < 0.5).astype(float)
        for item in range(60):
            flipped = values.copy()
            flipped[item] = 1 - flipped[item]
            before, after = intra_cluster_correlation([(clusters, values)]), intra_cluster_correlation([(clusters, flipped)])
            if -0.02 < before < 0 < after < 0.02:
                found = values, flipped
                break
        if found:
            break
    assert found is not None
    old = [_old_effective_items(clusters, v) for v in found]
    new = [cluster_design(np.full(20, 3.0), np.bincount(clusters, weights=v), float(v.var())).effective_items for v in found]
    assert old[0] == 20 and old[1] > 55  # the jump: 20 videos, then nearly the 60 items
    assert new == [20.0, 20.0]
    # continuous: a video effect of growing strength t added to fixed item noise, on unequal videos (10, 5 and ten
    # of 1 item), where s2 / V falls below the number of videos once the big videos differ from the rest
    sizes = np.array([10, 5] + [1] * 10)
    clusters = np.repeat(np.arange(12), sizes)
    noise = np.resize([0.3, -0.3, 0.0], 25) + 0.05 * np.random.default_rng(1).standard_normal(25)
    effect = np.repeat(np.array([1.0, -1.0] + [0.5, -0.5] * 5), sizes)
    path = [noise + t * effect for t in np.linspace(0.0, 1.0, 2001)]
    assert intra_cluster_correlation([(clusters, path[0])]) < 0 < intra_cluster_correlation([(clusters, path[-1])])
    n_eff = np.array([cluster_design(sizes, np.bincount(clusters, weights=v), float(v.var())).effective_items for v in path])
    assert n_eff[0] == 12 and n_eff[-1] < 4  # capped at first, far below the cap once the videos differ
    assert np.max(np.abs(np.diff(n_eff))) < 0.1
    olds = np.array([_old_effective_items(clusters, v) for v in path])
    assert np.max(np.abs(np.diff(olds))) > 10  # the old design effect jumped on the same path, from 12 to about 25


def test_no_interval_counts_more_items_than_videos():
    """Whatever the data, n_eff is at most the number of videos, so the closed form is never narrower than Wilson on
    G (z / t_df)^2 items; with nearly independent items (s2 / V above G) the cap is what sets it."""
    rng = np.random.default_rng(5)
    capped = 0
    for _ in range(300):
        sizes = rng.integers(1, 8, size=int(rng.integers(2, 40)))
        clusters = np.repeat(np.arange(len(sizes)), sizes)
        concentration = float(rng.choice([0.5, 4.0, 100.0]))
        rate = rng.beta(0.8 * concentration, 0.2 * concentration, size=len(sizes))
        values = (rng.random(len(clusters)) < rate[clusters]).astype(float)
        sums = np.bincount(clusters, weights=values)
        share = float(values.mean())
        design = cluster_design(sizes, sums, share * (1 - share))
        assert design.effective_items <= len(sizes)
        capped += design.effective_items == len(sizes)
        found = fallback_interval(sizes, sums)
        on_videos = clopper_pearson_interval(share, _n_star(len(sizes), bell_mccaffrey_df(sizes.astype(float))))
        assert found.high - found.low >= on_videos.high - on_videos.low - 1e-12
    assert 30 < capped < 300  # both sides of the cap were tried


def test_the_hard_design_of_issue_49_is_covered():
    """Issue 49: 10 videos of 25, 10, 5, 3, 2, 1, 1, 1, 1, 1 items, video rates from Beta(0.45, 0.05) (ICC about
    0.67), truth 0.9: the accuracy interval covered 87-91% before; now at least 93% (accuracy and Kalai's trust
    score, 2 x 0.9 - 1 = 0.8), through Resampler.interval."""
    rng = np.random.default_rng(49)
    sizes = np.array([25, 10, 5, 3, 2, 1, 1, 1, 1, 1])
    clusters = np.repeat(np.arange(10), sizes)
    resampler = Resampler(range(10), Bootstrap(resamples=10), ("hard",))  # below BCA_MIN_VIDEOS: no draw is used
    covered = {"accuracy": 0, "trust": 0}
    simulations = 600
    for _ in range(simulations):
        right = (rng.random(len(clusters)) < rng.beta(0.45, 0.05, size=10)[clusters]).astype(float)
        accuracy = resampler.interval(clusters, right)
        trust = resampler.interval(clusters, 2 * right - 1, bounds=(-1.0, 1.0))
        covered["accuracy"] += accuracy.low <= 0.9 <= accuracy.high
        covered["trust"] += trust.low <= 0.8 <= trust.high
    print(f"\nhard design coverage: {covered}")
    assert all(count / simulations >= 0.93 for count in covered.values()), covered


def test_a_number_never_gets_a_narrower_interval_than_with_fewer_videos():
    """The interval is chosen by the number of videos, and a number is never narrower than the method for fewer
    videos would make it on the same data: merging its videos (fewer, larger) never narrows the interval, and
    from BCA_MIN_VIDEOS on the bootstrap interval is replaced by the closed form where that is wider."""
    from virtuebench.support.bootstrap import BCA_MIN_VIDEOS

    rng = np.random.default_rng(3)
    for trial in range(40):
        n_videos = int(rng.integers(BCA_MIN_VIDEOS - 5, BCA_MIN_VIDEOS + 30))
        clusters = np.repeat(np.arange(n_videos), rng.integers(1, 8, size=n_videos))
        values = (rng.random(len(clusters)) < rng.choice([0.5, 0.9, 0.99])).astype(float)
        found = Resampler(clusters, SETTINGS, ("p", trial)).interval(clusters, values)
        closed = fallback_interval(np.bincount(clusters), np.bincount(clusters, weights=values))
        assert found.high - found.low >= closed.high - closed.low - 1e-12
        assert found.method == ("bca" if found.method == "bca" and n_videos >= BCA_MIN_VIDEOS else closed.method)
        for merge in (2, 3, 5):  # the same items on fewer, larger videos
            fewer = clusters // merge
            merged = Resampler(fewer, SETTINGS, ("p", trial)).interval(fewer, values)
            narrowest_before = min(found.high - found.low, closed.high - closed.low)
            assert merged.high - merged.low >= narrowest_before - 1e-12, (trial, merge, merged, found)


def test_bca_reduces_to_the_percentile_interval_without_bias_or_skew():
    from virtuebench.support.bootstrap import bca_interval

    samples = np.arange(1, 1001, dtype=float)
    # half the resamples below 500.5: no bias (z0 = 0); jackknife 4/3, 1, 1, 2/3 is symmetric: no acceleration;
    # so the plain 2.5% and 97.5% points: 25.975 and 975.025 (numpy's linear interpolation)
    low, high = bca_interval(samples, 500.5, np.ones(4), np.array([0.0, 1.0, 1.0, 2.0]))
    assert (low, high) == (pytest.approx(25.975), pytest.approx(975.025))
    # a skewed jackknife (1, 1, 1, 0): acceleration 0.375 / (6 x 0.75^1.5) = 0.0962 moves both ends up, to the
    # 4.958% and 99.214% points: 50.53 and 992.15
    low, high = bca_interval(samples, 500.5, np.ones(4), np.array([0.0, 0.0, 0.0, 3.0]))
    assert (low, high) == (pytest.approx(50.527, abs=1e-3), pytest.approx(992.152, abs=1e-3))
    # a biased estimate (only 10% of the resamples fall below it) shifts both ends down from the median's
    biased_low, biased_high = bca_interval(samples, 100.5, np.ones(4), np.array([0.0, 1.0, 1.0, 2.0]))
    assert biased_low < 25.975 and biased_high < 975.025
    assert bca_interval(samples, 500.5, np.ones(1), np.ones(1)) == (None, None)  # one video: no interval


def test_resamples_draw_each_video_with_replacement_and_are_seeded_by_their_key():
    settings = Bootstrap(resamples=300, seed=7)
    weights = settings.weights(5, ("k",))
    assert weights.shape == (300, 5) and (weights.sum(axis=1) == 5).all()  # 5 videos drawn per resample
    assert 0.15 < (weights == 0).mean() < 0.5  # (4/5)^5 = 0.33 of the videos are left out of a resample
    assert (settings.weights(5, ("k",)) == weights).all() and not (settings.weights(5, ("other",)) == weights).all()
    assert not (Bootstrap(resamples=300, seed=8).weights(5, ("k",)) == weights).all()
    assert settings.weights(0, ("k",)).shape == (300, 0)
    with pytest.raises(ValueError, match="^report.bootstrap.resamples must be at least 1, got 0$"):
        Bootstrap(resamples=0)
    assert Bootstrap(resamples=1).resamples == 1


def test_a_resampler_refuses_what_it_was_not_built_over_and_says_nothing_without_data():
    resampler = Resampler(["v1", "v2"], SETTINGS, ("k",))
    with pytest.raises(ValueError, match="^cluster 'v3' is not in the resampled universe$"):
        resampler.interval(["v1", "v3"], [1, 0])
    assert resampler.interval([], []) == Interval(None, None, "none")
    # One video, fewer than BCA_MIN_VIDEOS: the closed form, Wilson at 1/2 on n* = (z / t_1)^2 items.
    one_video = Resampler(["v1", "v2"], SETTINGS, ("k",)).interval(["v1", "v1"], [1, 0])
    assert one_video.method == "clopper-pearson-cr2" and (one_video.low, one_video.high) == pytest.approx(
        _clopper_pearson_by_hand(0.5, _n_star(1, 1))
    )
    # one item right on one video: Clopper-Pearson at 1 on the same n*
    assert resampler.mean_interval(["v1"], [1]) == pytest.approx((0.025 ** (1 / _n_star(1, 1)), 1.0))


def test_many_videos_get_a_bca_interval_around_the_estimate(monkeypatch):
    from virtuebench.support.bootstrap import BCA_MIN_VIDEOS

    narrow_closed_forms(monkeypatch)  # else the closed form, wider, is chosen (test_intervals_are_seeded_...)
    clusters = [v for v in range(60) for _ in range(2)]
    values = [v % 3 == 0 for v in range(60) for _ in range(2)]  # 40 of 120 right, a video's two items alike
    found = Resampler(clusters, Bootstrap(resamples=500), ("k",)).interval(clusters, values)
    assert found.method == "bca" and found.low < 1 / 3 < found.high and 0.1 < found.high - found.low < 0.5
    # the same items over fewer videos than the cut: the closed form, whatever the resamples would show
    few = [v % (BCA_MIN_VIDEOS - 1) for v in clusters]
    monkeypatch.undo()
    assert Resampler(few, Bootstrap(resamples=500), ("k",)).interval(few, values).method == "clopper-pearson-cr2"


def test_a_paired_difference_worked_by_hand():
    settings = Bootstrap(resamples=400)
    with pytest.raises(ValueError, match="^paired values differ in length: 2 clusters, 2 and 1 values$"):
        paired_difference(["a", "b"], [1, 0], [1], settings, ("p",))
    empty = paired_difference([], [], [], settings, ("p",))
    assert np.isnan(empty.difference) and (empty.ci_low, empty.p_value, empty.n, empty.n_clusters) == (None, None, 0, 0)
    # the same answers on both arms: no discordant item, p = 1
    same = paired_difference(["a", "a", "b"], [1, 0, 1], [1, 0, 1], settings, ("p",))
    assert (same.difference, same.p_value, same.n, same.n_clusters) == (0.0, 1.0, 3, 2)
    # 2 videos, so the closed form: Bonett-Price with no discordant item; no variance, so each video counts once:
    # n_eff 2 on 1 degree of freedom, each discordant cell 1 / (n* + 2), half-width z sqrt(2) / (n* + 2)
    # (1.35 here: clipped to [-1, 1])
    n_star = _n_star(2, 1)
    assert Z * 2**0.5 / (n_star + 2) > 1 and (same.ci_low, same.ci_high) == (-1.0, 1.0)
    # one discordant video among two: both sign patterns give the same |difference|: p = 1 (mid-p 1/2)
    tie = paired_difference(["a", "b"], [True, False], [False, False], settings, ("p",))  # booleans, as the report passes
    assert (tie.difference, tie.p_value) == (0.5, 1.0)
    assert Resampler(["a", "b"], settings, ("k",)).paired(["a", "b"], [1, 0], [0, 0], ("p",), "mid-p").p_value == 0.5
    # one video: Bonett-Price with the video as one item on 1 degree of freedom, n* = (z / t_1)^2: half the items
    # discordant, shares (n*/2 + 1) / (n* + 2) and 1 / (n* + 2), clipped at 1
    one = paired_difference(["a", "a"], [1, 1], [0, 1], settings, ("p",))
    n_star = _n_star(1, 1)
    share_a, share_b = (n_star / 2 + 1) / (n_star + 2), 1 / (n_star + 2)
    half = Z * ((share_a + share_b - (share_a - share_b) ** 2) / (n_star + 2)) ** 0.5
    assert (one.difference, one.n_clusters) == (0.5, 1)
    assert share_a - share_b - half < -1 and (one.ci_low, one.ci_high) == (-1.0, 1.0)  # nothing known: clipped
    # 12 videos, arm a right on every item and b wrong on every item: a sign flip of each video's sum matches the
    # observed |difference| only when all 12 flips agree (2 in 4096), exactly
    clusters = [v for v in range(12) for _ in range(2)]
    strong = paired_difference(clusters, [1] * 24, [0] * 24, settings, ("p",))
    assert strong.difference == 1.0 and strong.p_value == pytest.approx(2 / 4096, rel=1e-12)
    assert strong.test is not None and (strong.test.method, strong.test.p_mc_se, strong.test.n_discordant) == ("exact", 0.0, 12)
    assert (strong.n, strong.n_clusters) == (24, 12)
    # half the videos favour a, half b, by the same amount: no difference, a large p-value
    balanced = paired_difference(clusters, [v % 2 for v in clusters], [1 - v % 2 for v in clusters], settings, ("p",))
    assert balanced.difference == 0.0 and balanced.p_value > 0.5 and balanced.ci_low < 0 < balanced.ci_high


def test_the_closed_forms_read_the_video_sums():
    """Where a video's values go together and sizes differ, s2 / V falls below the number of videos: each closed
    form then uses it (not the cap), for accuracy, the trust score and a paired difference alike. Videos without
    items are none of the number's; the bounded mean on [0, 1] is Agresti & Coull's interval for a share."""
    sizes = np.array([6.0, 1, 1, 1, 1, 1, 1, 1])  # 13 items on 8 videos
    sums = np.array([0.0, 1, 1, 1, 1, 1, 1, 1])  # the big video all wrong, the others right: share 7/13
    values = np.repeat(sums / sizes, sizes.astype(int))
    share = 7 / 13
    design = cluster_design(sizes, sums, share * (1 - share))
    assert design.effective_items < 4 < 8  # far below the 8 videos
    n_star = design.adjusted_items()
    found = fallback_interval(sizes, sums)
    assert (found.low, found.high) == pytest.approx(_clopper_pearson_by_hand(share, n_star))
    trust = bounded_mean_fallback(2 * values - 1, (-1.0, 1.0), sizes, 2 * sums - sizes)
    expected = agresti_coull_mean(
        2 * values - 1, (-1.0, 1.0), cluster_design(sizes, 2 * sums - sizes, float((2 * values - 1).var())).adjusted_items()
    )
    assert trust.method == "agresti-coull-cr2" and (trust.low, trust.high) == pytest.approx((expected.low, expected.high))
    capped = agresti_coull_mean(2 * values - 1, (-1.0, 1.0), _n_star(8, design.degrees_of_freedom))  # as if the cap held
    assert trust.high - trust.low > capped.high - capped.low
    a, b = values, np.zeros_like(values)  # a right where the values are, b never: the differences are the values
    paired = paired_fallback(a, b, sizes, sums)
    by_hand = bonett_price_interval(a, b, n_star)
    assert (paired.low, paired.high) == pytest.approx((by_hand.low, by_hand.high))
    capped = bonett_price_interval(a, b, _n_star(8, design.degrees_of_freedom))
    assert paired.high - paired.low > capped.high - capped.low
    # through the resampler's paired path too (below BCA_MIN_VIDEOS: the closed form on each video's summed difference)
    clusters = np.repeat(np.arange(8), sizes.astype(int))
    through = Resampler(range(8), SETTINGS, ("k",)).paired(clusters, a, b, ("sums",))
    assert (through.ci_low, through.ci_high) == pytest.approx((by_hand.low, by_hand.high))
    # videos with no item are left out: the same design as without them
    assert cluster_design([0, 1, 3], [0, 1, 1], 0.25) == cluster_design([1, 3], [1, 1], 0.25) == Design(2.0, 1.0)
    assert cluster_design([2, 0, 2, 2], [2, 0, 2, 0], 2 / 9) == Design(pytest.approx(2.0), pytest.approx(2.0))
    # on [0, 1] the bounded mean is Agresti & Coull's interval for 3 right of 4
    share_interval = agresti_coull_mean([1.0, 0.0, 1.0, 1.0], (0.0, 1.0), 4)
    assert (share_interval.low, share_interval.high) == pytest.approx(_agresti_coull(3, 4))
    with pytest.raises(ValueError, match=r"within \[0, 1\]"):
        paired_fallback([0.0], [1.5], [1], [-1.5])
    with pytest.raises(ValueError, match=r"^paired_fallback needs arms within \[0, 1\] \(correct or not per item, or a mean over runs\)$"):
        paired_fallback([0.0], [-0.5], [1], [0.5])


@pytest.mark.parametrize("arms", ["0/1", "fractions"])
def test_paired_all_gives_each_numbers_own_paired_digits(arms, monkeypatch):
    """Numbers over one set of videos batched into one product give the digits of one call each (whole sums:
    exact in any order; fractions: one product each, as before)."""
    narrow_closed_forms(monkeypatch)  # so that the batched BCa products are what is compared (tests/helpers/intervals.py)
    rng = np.random.default_rng(3)
    clusters = np.repeat(np.arange(70), rng.integers(1, 5, size=70))
    numbers = []
    for at in range(4):
        if arms == "0/1":
            a, b = rng.integers(0, 2, len(clusters)).astype(float), rng.integers(0, 2, len(clusters)).astype(float)
        else:
            a, b = rng.integers(0, 4, len(clusters)) / 3, rng.integers(0, 4, len(clusters)) / 3
        numbers.append(PairedNumber(clusters.tolist(), a, b, ("row", at)))
    numbers.append(PairedNumber(clusters[:40].tolist(), numbers[0].a[:40], numbers[0].b[:40], ("few videos",)))
    numbers.append(PairedNumber([], [], [], ("empty",)))
    resampler = Resampler(clusters.tolist(), SETTINGS, ("paired-all",))
    together = resampler.paired_all(numbers)
    alone = [Resampler(clusters.tolist(), SETTINGS, ("paired-all",)).paired(n.clusters, n.a, n.b, n.key) for n in numbers]
    assert [(p.difference, p.ci_low, p.ci_high, p.p_value, p.n, p.n_clusters, p.ci_method) for p in together[:-1]] == [
        (p.difference, p.ci_low, p.ci_high, p.p_value, p.n, p.n_clusters, p.ci_method) for p in alone[:-1]
    ]
    assert together[-1].ci_method == alone[-1].ci_method == "none"
    assert {p.ci_method for p in together[:4]} == {"bca"} and together[4].ci_method == "narrowed-for-a-test"  # 40 videos
    coded = resampler.paired_all([PairedNumber(resampler.codes(n.clusters), n.a, n.b, n.key, coded=True) for n in numbers[:4]])
    assert [(p.ci_low, p.ci_high, p.p_value) for p in coded] == [(p.ci_low, p.ci_high, p.p_value) for p in alone[:4]]
