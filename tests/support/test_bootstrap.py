"""The report's statistics (virtuebench.support.bootstrap) on simulated benchmarks with known truth."""

from __future__ import annotations

import numpy as np
import pytest

from virtuebench.support.bootstrap import (
    Bootstrap,
    Interval,
    PairedNumber,
    Resampler,
    bounded_mean_fallback,
    holm,
    intra_cluster_correlation,
    mean_interval,
    paired_difference,
    paired_fallback,
)

SETTINGS = Bootstrap(resamples=1000, seed=0)
Z = 1.959963984540054  # the standard normal's 97.5% quantile


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
    assert 0.93 <= covered / simulations <= 0.985  # BCa, or the closed form where wider: conservative at most
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
    rng = np.random.default_rng(3)
    clusters, p_item = _benchmark(rng, 40, 0.5)
    a = rng.random(len(p_item)) < np.clip(p_item + 0.3, 0, 1)
    b = rng.random(len(p_item)) < p_item
    result = paired_difference(clusters, a, b, SETTINGS, ("power",))
    assert result.difference == pytest.approx(a.mean() - b.mean())
    assert result.p_value < 0.01 and 0 < result.ci_low < result.difference < result.ci_high
    assert (result.n, result.n_clusters) == (len(a), 40)


def test_intervals_are_seeded_per_number_and_one_video_gets_the_fallback():
    clusters = [v for v in range(60) for _ in range(3)]
    values = list(np.random.default_rng(5).random(180) < 0.5)
    first = mean_interval(clusters, values, SETTINGS, ("m", "honest", "64", "overall"))
    assert first == mean_interval(clusters, values, SETTINGS, ("m", "honest", "64", "overall"))
    assert first != mean_interval(clusters, values, Bootstrap(resamples=1000, seed=1), ("m", "honest", "64", "overall"))
    # One video: every resample is that video, so the bootstrap says nothing; the fallback rests on the benchmark's
    # intra-video correlation. rho 0.25: Wilson on 5 / (1 + 4 x 0.25) = 2.5 items; rho 1 (or none known): the
    # video counts as one item.
    alone = Resampler(["v"], SETTINGS, ("one",), rho=0.25).interval(["v"] * 5, [1, 0, 1, 1, 0])
    share, n = 0.6, 2.5
    centre = (share + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z * np.sqrt(share * (1 - share) / n + Z * Z / (4 * n * n)) / (1 + Z * Z / n)
    assert alone.method == "wilson-deff" and (alone.low, alone.high) == pytest.approx((centre - half, centre + half))
    wide = Resampler(["v"], SETTINGS, ("one",), rho=1.0).interval(["v"] * 5, [1, 0, 1, 1, 0])
    assert wide.low < alone.low and wide.high > alone.high


def _agresti_coull(successes: float, n: float) -> tuple[float, float]:
    """Agresti & Coull (1998): add z^2/2 successes and z^2/2 failures, then the Wald interval."""
    centre = (successes + Z * Z / 2) / (n + Z * Z)
    half = Z * np.sqrt(centre * (1 - centre) / (n + Z * Z))
    return max(0.0, centre - half), min(1.0, centre + half)


def test_an_all_right_or_all_wrong_subset_gets_an_interval_that_does_not_collapse():
    """Closed forms: Clopper-Pearson at 1 with n items nearly independent (rho 0.001) is about [(alpha/2)^(1/n), 1];
    with rho 1, or where rho is 0, negative or unknown (the conservative design effect), every video counts once
    (n_eff = number of videos)."""
    clusters = [v for v in range(5) for _ in range(4)]  # 5 videos, 20 items
    right = Resampler(clusters, SETTINGS, ("k",), rho=0.001).interval(clusters, [1] * 20)
    assert right.method == "clopper-pearson-deff" and right.high == 1.0 and right.low == pytest.approx(0.025 ** (1 / 20), abs=1e-3)
    for unknown in (0.0, -0.2, float("nan")):
        assert Resampler(clusters, SETTINGS, ("k",), rho=unknown).interval(clusters, [1] * 20).low == pytest.approx(0.025 ** (1 / 5))
    wrong = Resampler(clusters, SETTINGS, ("k",), rho=1.0).interval(clusters, [0] * 20)
    assert wrong.low == 0.0 and wrong.high == pytest.approx(1 - 0.025 ** (1 / 5))
    # a trust score of 100 (values in [-1, 1], only at the ends): Agresti-Coull on the share, mapped to the range
    trust = Resampler(clusters, SETTINGS, ("k",), rho=1e-9).interval(clusters, [1.0] * 20, bounds=(-1.0, 1.0))
    low, high = _agresti_coull(20, 20)
    assert trust.method == "agresti-coull-deff" and (trust.low, trust.high) == pytest.approx((-1 + 2 * low, -1 + 2 * high))
    # the trust score's own correlation, where given, sets its n_eff (rho 1: 5 videos count as 5 items)
    own = Resampler(clusters, SETTINGS, ("k",)).interval(clusters, [1.0] * 20, bounds=(-1.0, 1.0), rho=1.0)
    assert own.low == pytest.approx(-1 + 2 * _agresti_coull(5, 5)[0])


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
                found = bounded_mean_fallback(values, (-1.0, 1.0), [1] * n, 0.0)
                covered += found.low <= truth <= found.high
            assert covered / 1000 >= 0.93, (probabilities, n, covered)
    refused = bounded_mean_fallback([0.0] * 30, (-1.0, 1.0), [1] * 30, 0.0)
    binary = _agresti_coull(15, 30)  # 30 items at the share's middle as if each were right or wrong
    assert -1 + 2 * binary[0] < refused.low < 0 < refused.high < -1 + 2 * binary[1]
    for value in (-1.0, 0.0, 0.5, 1.0):
        found = bounded_mean_fallback([value] * 12, (-1.0, 1.0), [3] * 4, 0.3)
        assert -1.0 <= found.low < found.high <= 1.0 and found.low <= value <= found.high


def test_the_paired_fallback_is_bonett_price_where_the_bootstrap_collapses():
    clusters = [v for v in range(12) for _ in range(5)]  # 12 videos, 60 items
    same = [i % 3 == 0 for i in range(60)]
    identical = Resampler(clusters, SETTINGS, ("k",), rho=1e-12).paired(clusters, same, same, ("identical",))
    # no discordant item: Bonett-Price's pseudo-items give discordant shares 1/(n+2) each, a difference of 0 and
    # half-width z sqrt((2/(n+2)) / (n+2)) = z sqrt(2) / (n+2)
    half = Z * np.sqrt(2) / 62
    assert identical.ci_method == "bonett-price-deff" and (identical.ci_low, identical.ci_high) == pytest.approx((-half, half))
    assert identical.p_value == 1.0
    # every item right under a and wrong under b: every resample gives 1
    always = Resampler(clusters, SETTINGS, ("k",), rho=1.0).paired(clusters, [1] * 60, [0] * 60, ("always",))
    share_a, share_b = 13 / 14, 1 / 14  # rho 1: 12 effective items, 12 discordant
    centre, spread = share_a - share_b, Z * np.sqrt((share_a + share_b - (share_a - share_b) ** 2) / 14)
    assert always.ci_method == "bonett-price-deff" and always.ci_low == pytest.approx(centre - spread) and always.ci_high == 1.0
    # one video: the fallback too
    alone = Resampler(["v"], SETTINGS, ("k",)).paired(["v"] * 10, [1, 0] * 5, [0, 0] * 5, ("alone",))
    assert alone.ci_method == "bonett-price-deff" and alone.ci_low < alone.difference < alone.ci_high
    with pytest.raises(ValueError, match=r"within \[0, 1\]"):
        paired_fallback([1.5], [0.0], [1], 0.0)
    # a sampled model's per-item means: each difference counts as that much of a discordant item, which for 0/1 arms is
    # the count of discordant items, and elsewhere a variance no smaller than the differences' own
    means = paired_fallback([2 / 3, 1 / 3, 1.0, 0.0], [0.0, 1.0, 1.0, 0.0], [1, 1, 1, 1], 0.0)
    counted = paired_fallback([1, 0, 1, 0], [0, 1, 1, 0], [1, 1, 1, 1], 0.0)
    assert paired_fallback([1.0, 0.0], [0.0, 0.0], [1, 1], 0.0) == paired_fallback([1, 0], [0, 0], [1, 1], 0.0)
    assert means.method == counted.method == "bonett-price-deff"
    share = (2 / 3 + 1) / 6  # 2/3 of a discordant item each way, one pseudo-item each, on 4 + 2 items
    assert (means.low, means.high) == pytest.approx((-Z * np.sqrt(2 * share / 6), Z * np.sqrt(2 * share / 6)))


def test_the_paired_fallback_matches_a_published_bonett_price_interval():
    """statpsych's ci.prop.ps(.05, f00=12, f01=4, f10=26, f11=6) documents the interval [0.2548067, 0.6251933]
    (Bonett & Price 2012); independent items (rho 0, one item per video) reproduce it."""
    a = [0] * 12 + [0] * 4 + [1] * 26 + [1] * 6
    b = [0] * 12 + [1] * 4 + [0] * 26 + [1] * 6
    found = paired_fallback(a, b, [1] * 48, 0.0)
    assert (found.low, found.high) == pytest.approx((0.2548067, 0.6251933), abs=1e-6)


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
                found = paired_fallback(a, b, [1] * n, 0.0)
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


def test_the_fallback_interval_worked_by_hand():
    from virtuebench.support.bootstrap import effective_items, fallback_interval

    # all right, 4 items in 2 videos, rho just above 0: n_eff about 4; Clopper-Pearson's lower end solves p^4 = 0.025
    assert fallback_interval(1.0, [2, 2], 1e-12) == Interval(pytest.approx(0.397635, abs=1e-6), 1.0, "clopper-pearson-deff")
    # rho 0, negative or unknown: the conservative design effect, each of the 2 videos one item: 1 - ... at n_eff 2
    for unknown in (0.0, -0.3, float("nan")):
        assert fallback_interval(1.0, [2, 2], unknown).low == pytest.approx(0.025**0.5)
    # all wrong, rho 1: the design effect 1 + (4/2 - 1) x 1 = 2 halves the items: 1 - 0.025^(1/2) = 0.8419
    assert fallback_interval(0.0, [2, 2], 1.0) == Interval(0.0, pytest.approx(0.841886, abs=1e-6), "clopper-pearson-deff")
    # half right on n_eff 2: Wilson's interval 0.5 +- 0.4055 (centre 0.5 by symmetry)
    assert fallback_interval(0.5, [2, 2], 1.0) == Interval(
        pytest.approx(0.09453, abs=1e-5), pytest.approx(0.90547, abs=1e-5), "wilson-deff"
    )
    # one item per video: no design effect whatever rho; fewer items than 1 effective: counted as 1
    assert fallback_interval(1.0, [1, 1, 1], 1.0).low == pytest.approx(0.025 ** (1 / 3))
    assert fallback_interval(1.0, [], 0.0).low == pytest.approx(0.025)
    # Wilson at 1/4 on 8 items (by hand: centre 0.3395, half 0.2481) stays inside [0, 1]
    quarter = fallback_interval(0.25, [1] * 8, 0.5)
    assert (quarter.low, quarter.high, quarter.method) == (pytest.approx(0.0715, abs=1e-4), pytest.approx(0.5907, abs=1e-4), "wilson-deff")
    assert fallback_interval(0.5, [2, 2], 1.0, confidence=0.5).high < 0.9  # a lower confidence, a narrower interval
    # the cluster size is sum(m^2) / n, not the mean n / k: videos of 1 and 7 items (n 8, mean 4) have 50 / 8 =
    # 6.25, so at rho 0.5 the design effect is 1 + 5.25 x 0.5 = 3.625, not 1 + 3 x 0.5 = 2.5
    assert effective_items([1, 7], 0.5) == pytest.approx(8 / 3.625)
    assert effective_items([4, 4], 0.5) == pytest.approx(8 / 2.5)  # equal sizes: the two agree


def test_a_number_never_gets_a_narrower_interval_than_with_fewer_videos():
    """The interval is chosen by the number of videos, and a number is never narrower than the method for fewer
    videos would make it on the same data: merging its videos (fewer, larger) never narrows the interval, and
    from BCA_MIN_VIDEOS on the bootstrap interval is replaced by the closed form where that is wider."""
    from virtuebench.support.bootstrap import BCA_MIN_VIDEOS, fallback_interval

    rng = np.random.default_rng(3)
    for trial in range(40):
        n_videos = int(rng.integers(BCA_MIN_VIDEOS - 5, BCA_MIN_VIDEOS + 30))
        clusters = np.repeat(np.arange(n_videos), rng.integers(1, 8, size=n_videos))
        values = (rng.random(len(clusters)) < rng.choice([0.5, 0.9, 0.99])).astype(float)
        rho = float(rng.choice([float("nan"), -0.1, 0.05, 0.3]))
        found = Resampler(clusters, SETTINGS, ("p", trial), rho=rho).interval(clusters, values)
        sizes = np.bincount(clusters)
        closed = fallback_interval(values.mean(), sizes, rho)
        assert found.high - found.low >= closed.high - closed.low - 1e-12
        assert found.method == ("bca" if found.method == "bca" and n_videos >= BCA_MIN_VIDEOS else closed.method)
        for merge in (2, 3, 5):  # the same items on fewer, larger videos
            fewer = clusters // merge
            merged = Resampler(fewer, SETTINGS, ("p", trial), rho=rho).interval(fewer, values)
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
    # One video, fewer than BCA_MIN_VIDEOS: the closed form, Wilson at 1/2 on 2 items (correlation 1e-9 given).
    centre, half = 0.5, Z * (0.5 * 0.5 / 2 + Z * Z / 16) ** 0.5 / (1 + Z * Z / 2)
    one_video = Resampler(["v1", "v2"], SETTINGS, ("k",), rho=1e-9).interval(["v1", "v1"], [1, 0])
    assert one_video.method == "wilson-deff" and (one_video.low, one_video.high) == pytest.approx((centre - half, centre + half), abs=1e-6)
    # one item right on one video: Clopper-Pearson at 1 on 1 item, [0.025, 1]
    assert resampler.mean_interval(["v1"], [1]) == pytest.approx((0.025, 1.0))


def test_many_videos_get_a_bca_interval_around_the_estimate():
    from virtuebench.support.bootstrap import BCA_MIN_VIDEOS

    clusters = [v for v in range(60) for _ in range(2)]
    values = [v % 3 == 0 for v in range(60) for _ in range(2)]  # 40 of 120 right, a video's two items alike
    found = Resampler(clusters, Bootstrap(resamples=500), ("k",), rho=0.05).interval(clusters, values)
    assert found.method == "bca" and found.low < 1 / 3 < found.high and 0.1 < found.high - found.low < 0.5
    # the same items over fewer videos than the cut: the closed form, whatever the resamples would show
    few = [v % (BCA_MIN_VIDEOS - 1) for v in clusters]
    assert Resampler(few, Bootstrap(resamples=500), ("k",), rho=0.05).interval(few, values).method == "wilson-deff"


def test_a_paired_difference_worked_by_hand():
    settings = Bootstrap(resamples=400)
    with pytest.raises(ValueError, match="^paired values differ in length: 2 clusters, 2 and 1 values$"):
        paired_difference(["a", "b"], [1, 0], [1], settings, ("p",))
    empty = paired_difference([], [], [], settings, ("p",))
    assert np.isnan(empty.difference) and (empty.ci_low, empty.p_value, empty.n, empty.n_clusters) == (None, None, 0, 0)
    # the same answers on both arms: no discordant item, p = 1
    same = paired_difference(["a", "a", "b"], [1, 0, 1], [1, 0, 1], settings, ("p",))
    assert (same.difference, same.p_value, same.n, same.n_clusters) == (0.0, 1.0, 3, 2)
    # 2 videos, so the closed form: Bonett-Price with no discordant item; the differences' correlation is unknown
    # (all 0), so each video counts once: n_eff 2, each discordant cell 1 / (2 + 2), half-width z * sqrt(2 / 4) / 2
    assert (same.ci_low, same.ci_high) == pytest.approx((-Z * 0.5**0.5 / 2, Z * 0.5**0.5 / 2))
    # one discordant video among two: both sign patterns give the same |difference|: p = 1 (mid-p 1/2)
    tie = paired_difference(["a", "b"], [True, False], [False, False], settings, ("p",))  # booleans, as the report passes
    assert (tie.difference, tie.p_value) == (0.5, 1.0)
    assert Resampler(["a", "b"], settings, ("k",)).paired(["a", "b"], [1, 0], [0, 0], ("p",), "mid-p").p_value == 0.5
    # one video: Bonett-Price with the video as one item (its correlation cannot be estimated): the discordant
    # count 1 scaled to 1/2, shares (1/2 + 1) / 3 and 1 / 3, difference 1/6, half-width
    # z * sqrt((1/2 + 1/3 - 1/36) / 3), clipped at 1
    one = paired_difference(["a", "a"], [1, 1], [0, 1], settings, ("p",))
    half = Z * ((0.5 + 1 / 3 - 1 / 36) / 3) ** 0.5
    assert (one.difference, one.n_clusters) == (0.5, 1)
    assert (one.ci_low, one.ci_high) == (pytest.approx(1 / 6 - half), 1.0)
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


@pytest.mark.parametrize("arms", ["0/1", "fractions"])
def test_paired_all_gives_each_numbers_own_paired_digits(arms):
    """Numbers over one set of videos batched into one product give the digits of one call each (whole sums:
    exact in any order; fractions: one product each, as before)."""
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
    resampler = Resampler(clusters.tolist(), SETTINGS, ("paired-all",), rho=0.1)
    together = resampler.paired_all(numbers)
    alone = [Resampler(clusters.tolist(), SETTINGS, ("paired-all",), rho=0.1).paired(n.clusters, n.a, n.b, n.key) for n in numbers]
    assert [(p.difference, p.ci_low, p.ci_high, p.p_value, p.n, p.n_clusters, p.ci_method) for p in together[:-1]] == [
        (p.difference, p.ci_low, p.ci_high, p.p_value, p.n, p.n_clusters, p.ci_method) for p in alone[:-1]
    ]
    assert together[-1].ci_method == alone[-1].ci_method == "none"
    assert {p.ci_method for p in together[:4]} & {"bca", "bonett-price-deff"} and together[4].ci_method == "bonett-price-deff"
    coded = resampler.paired_all([PairedNumber(resampler.codes(n.clusters), n.a, n.b, n.key, coded=True) for n in numbers[:4]])
    assert [(p.ci_low, p.ci_high, p.p_value) for p in coded] == [(p.ci_low, p.ci_high, p.p_value) for p in alone[:4]]
