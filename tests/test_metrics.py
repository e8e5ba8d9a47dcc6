import csv
import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers.data import SCORING_DEFAULTS
from helpers.intervals import narrow_closed_forms

from virtuebench.metrics import (
    Score,
    Scoring,
    TrustWeights,
    compute_scores,
    in_subset,
    level_order,
    read_scores,
    write_invalid,
    write_scores,
)
from virtuebench.metrics import main as metrics_main
from virtuebench.records import Judgment, write_jsonl_atomic
from virtuebench.support.bootstrap import Bootstrap, Resampler, bounded_mean_fallback, cluster_design, fallback_interval


def _judgment(i, level, unanswerable, correct, category="perception", valid=True, prompt="honest"):
    return Judgment(
        f"i{i}",
        "m",
        prompt,
        level,
        "rules",
        category,
        "colour",
        "x",
        unanswerable,
        "r",
        int(unanswerable and correct),
        int(correct),
        valid,
        "",
        None,
        "fp",
    )


def test_scores_per_subset_and_pooled(tmp_path):
    judgments = [
        _judgment(1, 64, True, True),
        _judgment(2, 64, True, False, category="reasoning"),
        _judgment(3, 64, False, True, category="reasoning"),
        _judgment(4, 64, False, False, valid=False),  # invalid: counted, and counted as wrong
        _judgment(5, 128, False, True),
    ]
    scores = {(s.level, s.subset): s for s in compute_scores(judgments)}
    assert (scores[("64", "overall")].n_correct, scores[("64", "overall")].n) == (2, 4)
    assert scores[("64", "overall")].accuracy == 50.0
    assert scores[("64", "overall")].n_invalid == 1
    assert (scores[("64", "refusal")].n_correct, scores[("64", "refusal")].n) == (1, 2)
    assert (scores[("64", "non_refusal")].n_correct, scores[("64", "non_refusal")].n) == (1, 2)
    assert (scores[("64", "perception")].n_correct, scores[("64", "perception")].n) == (1, 2)
    assert (scores[("64", "reasoning")].n_correct, scores[("64", "reasoning")].n) == (1, 2)
    assert ("128", "refusal") not in scores  # no item, no number
    assert (scores[("all", "overall")].n_correct, scores[("all", "overall")].n) == (3, 5)
    write_scores(list(scores.values()), tmp_path / "scores.csv")
    header = (tmp_path / "scores.csv").read_text().splitlines()[0]
    assert header.startswith("model,prompt,level,subset,accuracy,n_correct,n")
    assert sorted(read_scores(tmp_path / "scores.csv"), key=str) == sorted(scores.values(), key=str)


def _item(instance, video, level, correct, *, unanswerable=False, refused=False, valid=True, prompt="honest", model="m"):
    return Judgment(
        instance,
        model,
        prompt,
        level,
        "rules",
        "perception",
        "colour",
        "x",
        unanswerable,
        "r",
        int(refused),
        int(correct),
        valid,
        "",
        None,
        "fp",
        video_id=video,
    )


def test_trust_score_charges_a_guess_more_than_an_honest_refusal():
    judgments = [
        _item("a", "v1", 64, True),  # right answer
        _item("b", "v1", 64, False, refused=True),  # refused where an answer was expected
        _item("c", "v2", 64, False),  # wrong answer
        _item("d", "v2", 64, False, unanswerable=True),  # answered where it should have refused
        _item("e", "v3", 64, True, unanswerable=True, refused=True),  # the refusal where due
        dataclasses.replace(_item("f", "v3", 64, False, valid=False), response=None, error="timeout"),  # no response: wrong
    ]
    overall = next(s for s in compute_scores(judgments) if (s.level, s.subset) == ("64", "overall"))
    assert (overall.n_correct, overall.n_wrong_refusal, overall.n, overall.n_videos) == (2, 1, 6, 3)
    # Kalai et al. (the default, t = 0.5): right answer 1, any refusal 0 (b and e), wrong -1 (c, d, f)
    assert overall.trust == round(100 * (1 + 0 + 0 - 3) / 6, 4)
    strict = TrustWeights(scheme="kalai", confidence_target=0.75)  # a wrong answer costs t/(1-t) = 3
    assert next(s for s in compute_scores(judgments, trust=strict) if (s.level, s.subset) == ("64", "overall")).trust == round(
        100 * (1 - 9) / 6, 4
    )
    # VirtueBench's refusal-credit variant: the due refusal (e) scores 1 like a right answer
    credit = TrustWeights(-1.0, 0.0, scheme="refusal-credit")
    assert next(s for s in compute_scores(judgments, trust=credit) if (s.level, s.subset) == ("64", "overall")).trust == round(
        100 * (2 + 0 - 3) / 6, 4
    )
    harsher = TrustWeights(-3.0, -0.5, scheme="refusal-credit")
    assert next(s for s in compute_scores(judgments, trust=harsher) if (s.level, s.subset) == ("64", "overall")).trust == round(
        100 * (2 - 0.5 - 9) / 6, 4
    )
    with pytest.raises(ValueError, match="wrong_answer < unwarranted_refusal"):
        TrustWeights(wrong_answer=0.0, unwarranted_refusal=0.0)
    with pytest.raises(ValueError, match="confidence_target"):
        TrustWeights(confidence_target=1.0)


def test_intervals_resample_videos_and_trace_to_the_records():
    rng = np.random.default_rng(2)
    rates = rng.beta(2.4, 1.6, size=60)  # videos of their own rate: items of a video go together
    judgments = [_item(f"i{v}_{k}", f"v{v}", 64, bool(rng.random() < rates[v])) for v in range(60) for k in range(4)]
    score = next(s for s in compute_scores(judgments) if (s.level, s.subset) == ("64", "overall"))
    assert score.ci_low < score.accuracy < score.ci_high and score.n_videos == 60
    # Against an independent computation: a plain percentile cluster bootstrap (its own draws, numpy only) of the
    # same 60 videos; resampling items instead would give a narrower one. 60 videos: BCa, unless the closed form on
    # the same videos is wider, as here (it counts at most one item a video, where the bootstrap sees about 150
    # effective items at ICC 0.2): it holds the bootstrap's interval with room to spare.
    own = np.random.default_rng(99)
    per_video = np.array([[j.judgement for j in judgments if j.video_id == f"v{v}"] for v in range(60)], dtype=float)
    draws = own.integers(0, 60, size=(8000, 60))
    means = 100 * per_video[draws].mean(axis=(1, 2))
    low, high = np.percentile(means, [2.5, 97.5])
    assert score.ci_low < low - 2 and score.ci_high > high + 2, (score.ci_low, score.ci_high, low, high)
    closed = fallback_interval(np.full(60, 4.0), per_video.sum(axis=1))
    assert (score.ci_method, score.ci_low, score.ci_high) == (
        "clopper-pearson-cr2",
        round(100 * closed.low, 4),
        round(100 * closed.high, 4),
    )
    # judgments without a video_id (judged before it was recorded) resample as single items
    alone = [dataclasses.replace(j, video_id=None) for j in judgments]
    single = next(s for s in compute_scores(alone) if (s.level, s.subset) == ("64", "overall"))
    assert single.n_videos == len(judgments)
    assert compute_scores(judgments) == compute_scores(list(reversed(judgments)))  # order does not matter


def test_scores_from_before_the_intervals_still_read(tmp_path):
    old = tmp_path / "scores.csv"
    old.write_text("model,prompt,level,subset,accuracy,n_correct,n,n_invalid,judge\nm,honest,64,overall,50.0,1,2,0,rules\n")
    (score,) = read_scores(old)
    assert (score.accuracy, score.ci_low, score.trust) == (50.0, None, None)
    assert (score.n_dropped, score.samples, score.n_truncated) == (0, 1, 0)  # columns added since read as their defaults


def test_the_cli_warns_when_judgments_lack_their_video(tmp_path):
    path = tmp_path / "j.jsonl"
    lines = [json.dumps({k: v for k, v in dataclasses.asdict(_item(f"i{k}", None, 64, True)).items() if k != "video_id"}) for k in range(3)]
    path.write_text("\n".join(lines) + "\n")
    cli = [sys.executable, "-m", "virtuebench.metrics", str(path), "--out", str(tmp_path / "s.csv"), "--seed", "0", "--resamples", "200"]
    run = subprocess.run([*cli, *SCORING_DEFAULTS], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "3 judgments have no video_id" in run.stderr
    above = list(SCORING_DEFAULTS)
    above[above.index("--wrong-answer") + 1] = "1"  # a wrong answer scored above an unwarranted refusal (0)
    bad = subprocess.run([*cli, *above], capture_output=True, text=True)
    assert bad.returncode == 2 and "wrong_answer < unwarranted_refusal" in bad.stderr


def test_the_trust_score_keeps_judge_failures_and_truncations_apart():
    """Accuracy counts every invalid item wrong (the paper's rule). The trust score charges none of these as a
    confident wrong answer: a judge failure (an answer, no verdict: decided_by none) is left out, a truncated reply
    scores as an answer withheld (Kalai 0; refusal-credit its unwarranted_refusal); a missing response (the model's
    failure to answer) stays a wrong answer. Each is counted apart."""
    judgments = [
        _item("a", "v1", 64, True),
        dataclasses.replace(_item("b", "v1", 64, True, valid=False), decided_by="none"),  # the judge failed
        dataclasses.replace(_item("c", "v2", 64, False, valid=False), truncated=True),  # cut off
        dataclasses.replace(_item("d", "v2", 64, False, valid=False), response=None, error="backend error"),
        _item("e", "v3", 64, False),
    ]
    score = _overall(judgments)[("rules", "64", "overall")]
    assert (score.n, score.n_correct, score.n_invalid, score.n_judge_failed, score.n_truncated) == (5, 1, 3, 1, 1)
    assert score.accuracy == 20.0
    assert score.trust == round(100 * (1 + 0 - 1 - 1) / 4, 4)  # b left out; c 0; d and e -1
    credit = _overall(judgments, trust=TrustWeights(-2.0, -0.5, scheme="refusal-credit"))[("rules", "64", "overall")]
    assert credit.trust == round(100 * (1 - 0.5 - 2 - 2) / 4, 4)
    # Kalai's scheme reads no refusal-credit setting: the truncated item scores 0 whatever unwarranted_refusal says
    kalai = _overall(judgments, trust=TrustWeights(-2.0, -0.5, scheme="kalai"))[("rules", "64", "overall")]
    assert kalai.trust == score.trust
    # nothing left to score: no trust score, no interval
    alone = _overall([judgments[1]])
    failed = alone[("rules", "64", "overall")]
    assert (failed.trust, failed.trust_ci_low, failed.trust_ci_method, failed.n_judge_failed) == (None, None, "none", 1)
    # no unanswerable item: no refusal row, and the subsets after it are still scored
    assert {subset for _, _, subset in alone} == {"non_refusal", "overall", "perception"}


def test_a_truncated_reply_the_judge_judged_scores_by_its_verdict():
    """Under the judge setting `truncated: judge` a cut-off reply is judged (valid): it then scores as its verdict says, a
    right answer 1 and a wrong one as wrong, not as an answer withheld; it is still counted as truncated."""
    cut = [
        dataclasses.replace(_item("a", "v1", 64, True), truncated=True),  # judged right
        dataclasses.replace(_item("b", "v2", 64, False), truncated=True),  # judged wrong
        dataclasses.replace(_item("c", "v3", 64, False, refused=True), truncated=True),  # judged a refusal
    ]
    score = _overall(cut)[("rules", "64", "overall")]
    assert (score.n_correct, score.n_invalid, score.n_truncated, score.accuracy) == (1, 0, 3, round(100 / 3, 4))
    assert score.trust == round(100 * (1 - 1 + 0) / 3, 4)
    credit = _overall(cut, trust=TrustWeights(-2.0, -0.5, scheme="refusal-credit"))[("rules", "64", "overall")]
    assert credit.trust == round(100 * (1 - 2 - 0.5) / 3, 4)


def test_an_invalid_verdict_is_wrong_whatever_its_judgement_field_says():
    """A malformed judge reply can carry judgement 1 with valid false: it must not count as right."""
    judgments = [_item("a", "v1", 64, True), dataclasses.replace(_item("b", "v2", 64, True), valid=False)]
    overall = next(s for s in compute_scores(judgments) if (s.level, s.subset) == ("64", "overall"))
    assert (overall.n_correct, overall.n_invalid, overall.accuracy) == (1, 1, 50.0)


def test_no_number_of_ten_or_more_items_has_a_zero_width_or_missing_interval():
    """Where the bootstrap collapses (every item right, every item wrong, all on one video) the fallback gives an
    interval of positive width that holds the estimate, for accuracy and for the trust score."""
    rng = np.random.default_rng(4)
    judgments = []
    for model, right in (("right", lambda: True), ("wrong", lambda: False), ("mixed", lambda: bool(rng.random() < 0.7))):
        for v in range(6):
            for k in range(4):
                unanswerable = k == 3
                judgments.append(
                    _item(
                        f"i{v}_{k}", f"v{v}", 64, right(), unanswerable=unanswerable, refused=unanswerable and model == "right", model=model
                    )
                )
    judgments += [_item(f"one{k}", "v0", 64, k % 3 != 0, model="alone") for k in range(12)]  # 12 items, one video
    scores = [s for s in compute_scores(judgments) if s.n >= 10]
    assert {s.model for s in scores} == {"right", "wrong", "mixed", "alone"}
    for s in scores:
        for low, estimate, high, method in (
            (s.ci_low, s.accuracy, s.ci_high, s.ci_method),
            (s.trust_ci_low, s.trust, s.trust_ci_high, s.trust_ci_method),
        ):
            assert low is not None and high is not None and low < high and low <= estimate <= high, s
            assert method in ("bca", "clopper-pearson-cr2", "agresti-coull-cr2"), s
    methods = {(s.model, s.subset): (s.ci_method, s.trust_ci_method) for s in scores if s.level == "64"}
    assert methods[("right", "overall")] == ("clopper-pearson-cr2", "agresti-coull-cr2")  # every item right
    assert methods[("wrong", "overall")] == ("clopper-pearson-cr2", "agresti-coull-cr2")  # every item wrong
    assert methods[("alone", "overall")] == ("clopper-pearson-cr2", "agresti-coull-cr2")  # one video


def test_the_trust_fallback_uses_the_trust_scores_own_cluster_design():
    """Half the videos hold only unanswerable items, refused (correct, trust 0), half only answerable items
    answered right (trust 1), 1, 2 or 3 items each: correctness is the same everywhere (no variance: each of the 12
    videos counts as one item), the trust score is constant within each video and differs between them, so its own
    design (CR2 variance of its values) counts fewer effective items than videos, and its interval is wider."""
    sizes = [1, 2, 3, 1, 2, 3]
    judgments = [
        _item(f"u{v}_{k}", f"u{v}", 64, True, unanswerable=True, refused=True) for v, size in enumerate(sizes) for k in range(size)
    ]
    judgments += [_item(f"a{v}_{k}", f"a{v}", 64, True) for v, size in enumerate(sizes) for k in range(size)]
    overall = next(s for s in compute_scores(judgments) if (s.level, s.subset) == ("64", "overall"))
    videos = np.array(sizes * 2, dtype=float)
    accuracy = fallback_interval(videos, videos)
    assert overall.ci_method == "clopper-pearson-cr2" and overall.ci_low == round(100 * accuracy.low, 4)
    assert cluster_design(videos, videos, 0.0).effective_items == 12
    values = [0.0] * 12 + [1.0] * 12
    counts, sums = videos, np.array([0.0] * 6 + sizes)  # per video: the refused ones sum to 0, the answered to their size
    trust = bounded_mean_fallback(values, (-1.0, 1.0), counts, sums)
    assert cluster_design(counts, sums, 0.25).effective_items < 12
    assert overall.trust_ci_method == "agresti-coull-cr2"
    assert (overall.trust_ci_low, overall.trust_ci_high) == (round(100 * trust.low, 4), round(100 * trust.high, 4))
    on_videos = bounded_mean_fallback(values, (-1.0, 1.0), counts, counts / 2)  # half of each video right: s2 / V large
    assert overall.trust_ci_low < 100 * on_videos.low - 1  # fewer effective items, a wider interval


# ---- hand-worked numbers for every branch of metrics.py (the mutation report, `make mutation`, lists what each catches)


def _overall(judgments, **kwargs):
    return {(s.judge, s.level, s.subset): s for s in compute_scores(judgments, **kwargs)}


def _n_star(n_eff, df):
    """Korn & Graubard's adjusted size n_eff (z / t_df)^2, with scipy.stats' t quantile."""
    from scipy import stats

    return n_eff * (1.959963984540054 / stats.t.ppf(0.975, df)) ** 2


def test_an_all_correct_number_gets_the_clopper_pearson_interval_on_its_items():
    # 4 videos x 2 items, all right: 4 videos, so the closed form: Clopper-Pearson at 1 on n* items. Every value equal:
    # no variance, so each video counts once, n_eff = 4, on 3 degrees of freedom; the lower end solves p^n* = 0.025.
    judgments = [_item(f"{v}{k}", v, 64, True) for v in ("v1", "v2", "v3", "v4") for k in range(2)]
    score = _overall(judgments)[("rules", "64", "overall")]
    n_star = _n_star(4, 3)
    assert (score.ci_low, score.ci_high, score.ci_method) == (round(100 * 0.025 ** (1 / n_star), 4), 100.0, "clopper-pearson-cr2")
    # the trust score's items all score 1 on a scale from -1 (a wrong answer) to 1: Agresti-Coull on that scale,
    # n* successes of n* plus z^2 / 2 pseudo-items at each end: p~ = (n* + z^2 / 2) / (n* + z^2), p~ - z sqrt(p~ (1 - p~) / (n* + z^2))
    z = 1.959963984540054
    share = (n_star + z * z / 2) / (n_star + z * z)
    low = share - z * (share * (1 - share) / (n_star + z * z)) ** 0.5
    assert score.trust == 100.0 and score.trust_ci_method == "agresti-coull-cr2"
    assert (score.trust_ci_low, score.trust_ci_high) == (pytest.approx(100 * (-1 + 2 * low), abs=1e-4), 100.0)


def _clopper_pearson(share, n):
    """scipy.stats.beta's quantiles at share * n of n right (the public function, not the module's betaincinv)."""
    beta = pytest.importorskip("scipy.stats").beta
    right = share * n
    return round(100 * beta.ppf(0.025, right, n - right + 1), 4), round(100 * beta.ppf(0.975, right + 1, n - right), 4)


def test_the_closed_form_counts_videos_not_items_and_pools_levels_by_video():
    """Level 64: videos 0, 2, 4 right on both their items, 1, 3, 5 wrong on both; level 128 the other way round.
    Per level the items of a video agree: sums 2, 0, 2, ..., residuals +-1, leverage 1/6, so V = 6 x 1 / (5/6) / 144
    = 1/20 and s2 / V = (1/4) / (1/20) = 5: 5 effective items of 12 (fewer than the 6 videos), on 5 degrees of
    freedom. Level `all` counts each video with all its levels (issue 49): every video 2 right of 4, V = 0, so
    n_eff = the 6 videos (not its 24 items, nor 12 video-levels)."""
    judgments = [_item(f"q{v}_{k}", f"v{v}", 64, v % 2 == 0) for v in range(6) for k in range(2)]
    judgments += [_item(f"q{v}_{k}", f"v{v}", 128, v % 2 == 1) for v in range(6) for k in range(2)]
    scores = _overall(judgments)
    level = scores[("rules", "64", "overall")]
    assert (level.ci_low, level.ci_high, level.ci_method, level.n_videos) == (
        *_clopper_pearson(0.5, _n_star(5, 5)),
        "clopper-pearson-cr2",
        6,
    )
    pooled = scores[("rules", "all", "overall")]
    assert (pooled.ci_low, pooled.ci_high, pooled.n, pooled.n_videos) == (*_clopper_pearson(0.5, _n_star(6, 5)), 24, 6)
    # a second judge's items (varying within videos) leave the first judge's numbers as they are
    other = [dataclasses.replace(j, judge="other", judgement=int(j.instance_id.endswith("0"))) for j in judgments]
    assert _overall(judgments + other)[("rules", "all", "overall")] == pooled


def test_wrong_refusals_count_refusals_that_were_not_the_right_answer():
    judgments = [
        _item("a", "v1", 64, False, refused=True),  # refused where an answer was expected
        _item("b", "v1", 64, False, refused=True),
        _item("c", "v2", 64, True, unanswerable=True, refused=True),  # the refusal that was due
        _item("d", "v2", 64, False, refused=True, valid=False),  # no valid verdict: not counted
    ]
    assert _overall(judgments)[("rules", "64", "overall")].n_wrong_refusal == 2


def test_subsets_pick_their_items():
    judgments = [
        _item("a", "v1", 64, True, unanswerable=True, refused=True),
        dataclasses.replace(_item("b", "v1", 64, False), category="reasoning"),
        _item("c", "v2", 64, True),
    ]
    scores = _overall(judgments)
    assert (scores[("rules", "64", "refusal")].n, scores[("rules", "64", "refusal")].n_correct) == (1, 1)
    assert (scores[("rules", "64", "non_refusal")].n, scores[("rules", "64", "non_refusal")].n_correct) == (2, 1)
    assert (scores[("rules", "64", "perception")].n, scores[("rules", "64", "reasoning")].n) == (2, 1)
    assert scores[("rules", "64", "reasoning")].accuracy == 0.0
    # the subsets are in_subset's, which virtuebench.comparisons uses too
    for subset in ("overall", "non_refusal", "refusal", "perception", "reasoning"):
        assert scores[("rules", "64", subset)].n == sum(in_subset(j, subset) for j in judgments), subset
    assert [in_subset(judgments[0], subset) for subset in ("overall", "refusal", "non_refusal", "perception", "reasoning")] == [
        True,
        True,
        False,
        True,
        False,
    ]
    assert [in_subset(judgments[1], subset) for subset in ("overall", "refusal", "non_refusal", "perception", "reasoning")] == [
        True,
        False,
        True,
        False,
        True,
    ]


def test_accuracy_keeps_four_decimals():
    judgments = [_item(f"i{k}", f"v{k}", 64, k < 2) for k in range(3)]  # 2 of 3: 66.666...%
    assert _overall(judgments)[("rules", "64", "overall")].accuracy == 66.6667


def test_rows_come_in_level_order_with_all_last():
    judgments = [_item(f"i{level}", "v1", level, True) for level in (1024, 64, 128)]
    assert [s.level for s in compute_scores(judgments) if s.subset == "overall"] == ["64", "128", "1024", "all"]
    assert level_order("all") == (True, 0) and level_order("64") == (False, 64) and level_order("0") == (False, 0)


def test_every_field_of_a_score_survives_the_csv(tmp_path):
    score = Score(
        "m", "honest", "64", "overall", 62.5, 5, 8, 3, "rules", 40.1, 80.2, 4, 2, -12.5, -40.0, 10.0, "bca", "clopper-pearson-cr2", 1, 2
    )
    sampled = dataclasses.replace(score, samples=3, accuracy_sd=12.5, accuracy_min=50.25, accuracy_max=75.125, trust_sd=20.0625)
    sampled = dataclasses.replace(sampled, trust_failed_best=-2.5, trust_failed_worst=-20.125)  # the failure bounds
    sampled = dataclasses.replace(sampled, n_dropped=2)  # report.invalid: drop
    write_scores([score, sampled], tmp_path / "scores.csv")
    assert read_scores(tmp_path / "scores.csv") == [score, sampled]  # a sampled model's row: its runs and their spread
    write_scores([score], tmp_path / "scores.csv")
    assert (tmp_path / "scores.csv").read_text().splitlines()[0] == ",".join(f.name for f in dataclasses.fields(Score))
    assert read_scores(tmp_path / "scores.csv") == [score]
    (tmp_path / "quoted.csv").write_text('model,prompt,level,subset,accuracy,n_correct,n,n_invalid,judge\n"m\nx",p,64,overall,1,1,1,0,r\n')
    assert read_scores(tmp_path / "quoted.csv")[0].model == "m\nx"  # a line break inside a quoted field stays in it
    # a line break written by another program (CRLF) inside a quoted field is kept as it is, not translated
    (tmp_path / "crlf.csv").write_bytes(
        b'model,prompt,level,subset,accuracy,n_correct,n,n_invalid,judge\r\n"m\r\nx",p,64,overall,1,1,1,0,r\r\n'
    )
    assert read_scores(tmp_path / "crlf.csv")[0].model == "m\r\nx"
    write_scores([], tmp_path / "none.csv")  # no rows: still the header
    assert (tmp_path / "none.csv").read_text().splitlines() == [",".join(f.name for f in dataclasses.fields(Score))]
    (old,) = read_scores(_old_scores(tmp_path))
    assert (old.n_videos, old.n_wrong_refusal, old.ci_method, old.trust_ci_method) == (0, 0, "", "")
    assert (old.n_truncated, old.n_judge_failed) == (0, 0)  # files from before the two counts
    assert (old.samples, old.accuracy_sd, old.accuracy_min, old.accuracy_max, old.trust_sd) == (1, None, None, None, None)
    assert (old.trust_failed_best, old.trust_failed_worst) == (None, None)  # files from before the failure bounds


def _old_scores(tmp_path):
    path = tmp_path / "old.csv"
    path.write_text("model,prompt,level,subset,accuracy,n_correct,n,n_invalid,judge\nm,honest,64,overall,50.0,1,2,0,rules\n")
    return path


def test_invalid_items_are_listed(tmp_path):
    bad = [
        dataclasses.replace(_item(f"i{k}", "v1", 64, False, valid=False), reason=f"reason {k}", error=error)
        for k, error in enumerate(["timeout", "timeout", None, "no verdict", "HTTP 500"])
    ]
    listed = tmp_path / "invalid.csv"
    assert write_invalid([_item("ok", "v1", 64, True), *bad], listed) == 5
    with listed.open() as handle:
        rows = list(csv.DictReader(handle))
    assert [row["instance_id"] for row in rows] == ["i0", "i1", "i2", "i3", "i4"]
    assert rows[0] == {
        "judge": "rules",
        "model": "m",
        "prompt": "honest",
        "level": "64",
        "instance_id": "i0",
        "reason": "reason 0",
        "error": "timeout",
    }
    assert [row["error"] for row in rows[1:]] == ["timeout", "", "no verdict", "HTTP 500"]  # no error: an empty cell
    write_invalid([_item("ok", "v1", 64, True)], tmp_path / "empty.csv")
    assert (tmp_path / "empty.csv").read_text().splitlines() == ["judge,model,prompt,level,instance_id,reason,error"]
    # an error message of several lines comes back whole
    write_invalid([dataclasses.replace(bad[0], error="line 1\r\nline 2")], tmp_path / "lines.csv")
    with (tmp_path / "lines.csv").open(newline="") as handle:
        assert next(csv.DictReader(handle))["error"] == "line 1\r\nline 2"


def test_scores_without_an_interval_read_back_as_none():
    from virtuebench import metrics

    assert metrics._percent(None) is None and metrics._percent(0.123456) == 12.3456
    assert metrics._optional("") is None and metrics._optional(None) is None and metrics._optional("1.5") == 1.5


def test_trust_settings_are_checked_with_their_config_names():
    with pytest.raises(ValueError, match=r"^report.trust.scheme: 'kalia' is not one of kalai, refusal-credit$"):
        TrustWeights(scheme="kalia")
    with pytest.raises(ValueError, match="confidence_target must lie strictly between 0 and 1, got 0"):
        TrustWeights(confidence_target=0)
    with pytest.raises(ValueError, match=r"^report.trust: need wrong_answer < unwarranted_refusal <= 0 \(a guess must cost"):
        TrustWeights(wrong_answer=-1.0, unwarranted_refusal=0.5)
    assert TrustWeights(wrong_answer=-1.0, unwarranted_refusal=0.0).unwarranted_refusal == 0.0  # 0 itself is allowed


def test_the_caption_names_the_scheme():
    assert TrustWeights().describe().startswith("a correct answer scores 1, any refusal 0 and a wrong answer -1 (Kalai et al., 2025")
    assert (
        TrustWeights(-2.0, -0.5, scheme="refusal-credit")
        .describe()
        .startswith(
            "a correct item (an answer the frames support, or the refusal where they do not) scores 1, a refusal where an answer "
            "was expected scores -0.5 and any other answer -2 (VirtueBench's"
        )
    )


def _cli_judgments(tmp_path):
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write_jsonl_atomic(first, [_item("a", "v1", 64, True), _item("b", "v2", 64, False, valid=False)])
    write_jsonl_atomic(second, [_item("c", None, 64, True, model="n"), _item("d", None, 64, False, model="n")])
    return first, second


CLI_OPTIONS = {
    "--out": "s.csv",
    "--resamples": "50",
    "--seed": "3",
    "--trust-scheme": "refusal-credit",
    "--confidence-target": "0.5",
    "--wrong-answer": "-2",
    "--unwarranted-refusal": "-0.5",
    "--invalid": "wrong",
    "--categories": "{}",
}


def test_the_cli_says_in_one_line_that_scipy_is_missing(tmp_path, capsys, monkeypatch):
    """An environment without scipy (a virtual environment made before it was a dependency): exit 1, one line naming
    it and what to run, no scores written."""
    from virtuebench.support import bootstrap

    monkeypatch.chdir(tmp_path)
    first, _ = _cli_judgments(tmp_path)
    monkeypatch.setitem(sys.modules, "scipy.special", None)  # import scipy.special then raises ImportError
    bootstrap._special.cache_clear()
    try:
        assert metrics_main([str(first), *[part for item in CLI_OPTIONS.items() for part in item]]) == 1
    finally:
        bootstrap._special.cache_clear()
    said = capsys.readouterr().err
    assert (
        said
        == f"error: scipy is not installed for {sys.executable}; the intervals need its t and beta quantiles: run `make install` (or pip install 'scipy>=1.13')\n"
    )
    assert not (tmp_path / "s.csv").exists()


def test_the_cli_scores_every_file_and_lists_the_invalid_items(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    first, second = _cli_judgments(tmp_path)
    options = [part for option, value in CLI_OPTIONS.items() for part in (option, value)]
    assert metrics_main([str(first), str(second), *options, "--invalid-out", "invalid.csv"]) == 0
    scores = {(s.model, s.level, s.subset): s for s in read_scores(tmp_path / "s.csv")}
    m, n = scores[("m", "64", "overall")], scores[("n", "64", "overall")]
    assert (m.n, m.n_correct, m.n_invalid, n.n, n.n_correct, n.n_videos) == (2, 1, 1, 2, 1, 2)
    # refusal-credit with a wrong answer at -2: (1 - 2) / 2 items = -50; m's invalid item has a response but no
    # verdict (a judge failure): wrong in accuracy, left out of the trust score
    assert n.trust == -50.0 and (m.trust, m.n_judge_failed, m.n_truncated) == (100.0, 1, 0)
    with (tmp_path / "invalid.csv").open() as handle:
        assert [row["instance_id"] for row in csv.DictReader(handle)] == ["b"]
    said = capsys.readouterr().err
    assert (
        "WARNING: 2 judgments have no video_id (judged before it was recorded); their intervals resample items, which is "
        "too narrow where questions share a video: rerun the judge jobs (`snakemake --forcerun judge_responses`)"
    ) in said
    assert said.rstrip().endswith(f"scores: {len(scores)} rows from 4 judgments (1 invalid) -> s.csv")
    # each row carries its judgments' digest (empty: these are not in a results folder's layout) and its own
    with (tmp_path / "s.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert all(row["judgments_digest"] == "" and len(row["row_digest"]) == 32 for row in rows)
    # a rerun writes the same digits; judgments that all have their video give no warning
    written = (tmp_path / "s.csv").read_text()
    assert metrics_main([str(first), str(second), *options]) == 0 and (tmp_path / "s.csv").read_text() == written
    capsys.readouterr()
    assert metrics_main([str(first), *options]) == 0 and "no video_id" not in capsys.readouterr().err


@pytest.mark.parametrize("option", list(CLI_OPTIONS))
def test_the_cli_needs_every_setting(tmp_path, capsys, option):
    first, _ = _cli_judgments(tmp_path)
    rest = [part for name, value in CLI_OPTIONS.items() if name != option for part in (name, value)]
    with pytest.raises(SystemExit) as exited:
        metrics_main([str(first), *rest])
    assert exited.value.code == 2 and f"the following arguments are required: {option}" in capsys.readouterr().err


def test_the_cli_refuses_bad_settings_by_name(tmp_path, capsys):
    first, _ = _cli_judgments(tmp_path)
    options = {**CLI_OPTIONS, "--out": str(tmp_path / "s.csv")}
    for option, value, message in [
        ("--resamples", "0", "report.bootstrap.resamples must be at least 1, got 0"),
        ("--confidence-target", "1.5", "confidence_target must lie strictly between 0 and 1, got 1.5"),
        ("--resamples", "many", "argument --resamples: invalid int value: 'many'"),
        ("--trust-scheme", "other", "argument --trust-scheme: invalid choice: 'other'"),
        ("--invalid", "skip", "argument --invalid: invalid choice: 'skip'"),
    ]:
        argv = [str(first), *[part for name, v in {**options, option: value}.items() for part in (name, v)]]
        with pytest.raises(SystemExit) as exited:
            metrics_main(argv)
        assert exited.value.code == 2 and message in capsys.readouterr().err
    with pytest.raises(SystemExit):
        metrics_main(["--out", "x"])  # no judgments file
    assert "the following arguments are required: judgments" in capsys.readouterr().err


def test_the_cli_help_says_what_each_setting_is(capsys):
    with pytest.raises(SystemExit):
        metrics_main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert text.startswith("usage: python -m virtuebench.metrics [-h] --out OUT")
    assert "Scores from judgment records: one row per number any table or figure shows" in text
    assert "Accuracy is over all items" not in text  # the first paragraph only
    for said in [
        "--invalid-out INVALID_OUT CSV listing every judgment without a valid verdict",
        "--resamples RESAMPLES bootstrap resamples per number",
        "--seed SEED bootstrap seed",
        "--resample-cache RESAMPLE_CACHE a folder keeping the bootstrap's drawn weights for the other report jobs (changes no digit)",
        "--trust-scheme {kalai,refusal-credit}",
        "--confidence-target CONFIDENCE_TARGET kalai: the confidence target t",
        "--wrong-answer WRONG_ANSWER refusal-credit: trust score of a wrong answer",
        "--unwarranted-refusal UNWARRANTED_REFUSAL refusal-credit: trust score of a refusal where an answer was expected",
        "--judge JUDGE the report judge: refuse judgments of any other, and an empty selection",
        "--invalid {wrong,drop} an item without a response or a verdict: counted wrong, or dropped",
        '--categories CATEGORIES task types scored in another category, as JSON ({} for none): {"temporal grounding": "reasoning"}',
    ]:
        assert said in text, said


def test_the_cli_uses_the_given_resamples_and_seed(tmp_path, monkeypatch):
    """The CLI's numbers are compute_scores' with Bootstrap(resamples, seed): the seed reaches the resamples."""
    # 60 videos of 1-7 items that mostly agree within a video. The closed forms, wider than BCa on every design tried
    # since they use Clopper-Pearson on n* (docs/statistics.md), are made to have no width here, so BCa is chosen
    # under both seeds and the seed shows
    narrow_closed_forms(monkeypatch)
    rng = np.random.default_rng(0)
    sizes, rates = rng.integers(1, 8, size=60), rng.beta(0.24, 0.16, size=60)
    judgments = [_item(f"i{v}_{k}", f"v{v}", 64, bool(rng.random() < rates[v])) for v in range(60) for k in range(sizes[v])]
    write_jsonl_atomic(tmp_path / "j.jsonl", judgments)
    options = {**CLI_OPTIONS, "--out": str(tmp_path / "s.csv"), "--seed": "5", "--resamples": "400"}
    assert metrics_main([str(tmp_path / "j.jsonl"), *[part for item in options.items() for part in item]]) == 0
    trust = TrustWeights(-2.0, -0.5, scheme="refusal-credit")
    expected = compute_scores(judgments, Bootstrap(400, 5), trust)
    assert read_scores(tmp_path / "s.csv") == expected
    assert expected[0].ci_method == "bca" and expected != compute_scores(judgments, Bootstrap(400, 0), trust)  # the seed matters


def test_the_cli_refuses_to_publish_over_a_stale_chain_and_names_it(tmp_path, capsys, monkeypatch):
    """With --chain-root (the workflow's results folder) a judgments file made from an instances table that is gone is
    stale: exit 1, one error naming both and what to run, no scores written. Without it the same file is scored.
    (No instances table is written here: polars hangs in the forked processes `make mutation` runs this test in.)"""
    monkeypatch.chdir(tmp_path)
    judged = Path("results/judgments/rules/m/honest/64.jsonl")
    write_jsonl_atomic(judged, [dataclasses.replace(_judgment(1, 64, False, True), video_id="v1", question="q")])
    options = [part for option, value in CLI_OPTIONS.items() for part in (option, value)]
    assert metrics_main([str(judged), "--chain-root", "results", *options]) == 1
    said = capsys.readouterr().err
    assert said.startswith("error: refusing to publish from stale or missing upstream files:\n")
    assert f"{judged}: made from results/instances.parquet, which is missing" in said
    assert "rerun the workflow" in said and not (tmp_path / "s.csv").exists()
    assert metrics_main([str(judged), *options]) == 0 and (tmp_path / "s.csv").exists()


def test_the_report_judge_needs_judged_items_of_its_own(tmp_path, capsys):
    first, second = _cli_judgments(tmp_path)  # records of judge `rules`
    options = [part for option, value in CLI_OPTIONS.items() for part in (option, value)]
    assert metrics_main([str(first), str(second), *options, "--out", str(tmp_path / "s.csv"), "--judge", "rules"]) == 0
    capsys.readouterr()
    # Records under another name than the report judge's (judged before a rules judge was recorded under its name)
    assert metrics_main([str(first), str(second), *options, "--out", str(tmp_path / "t.csv"), "--judge", "strict"]) == 1
    error = capsys.readouterr().err
    assert f"error: judge 'strict': 4 of the 4 judged items read from 2 judgment file(s) ({first}, {second})" in error
    assert "recorded under another judge: 'rules' (4)" in error and "--forcerun judge_responses" in error
    assert not (tmp_path / "t.csv").exists()
    # No judged item at all: an error naming the judge and the files, not a table of "-"
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert metrics_main([str(empty), *options, "--out", str(tmp_path / "u.csv"), "--judge", "strict"]) == 1
    assert f"error: no judged items for judge 'strict' in the 1 judgment file(s) read ({empty})" in capsys.readouterr().err
    assert not (tmp_path / "u.csv").exists()


def test_require_judge_lists_a_few_of_many_files():
    from virtuebench.metrics import require_judge
    from virtuebench.records import RecordError

    paths = [f"results/judgments/strict/m/honest/{level}.jsonl" for level in (64, 128, 256, 512, 1024)]
    with pytest.raises(RecordError) as error:
        require_judge([], "strict", paths)
    listed = "results/judgments/strict/m/honest/64.jsonl, results/judgments/strict/m/honest/128.jsonl, "
    assert f"5 judgment file(s) read ({listed}results/judgments/strict/m/honest/256.jsonl and 2 more)" in str(error.value)
    with pytest.raises(RecordError) as error:  # three files: all named
        require_judge([], "strict", paths[:3])
    assert str(error.value).endswith(f"3 judgment file(s) read ({listed}{paths[2]}): the tables would hold no number")
    require_judge([_judgment(1, 64, False, True)], "rules", paths[:1])
    # Several other judges: each named with its count, in name order
    other = [dataclasses.replace(_judgment(i, 64, False, True), judge=name) for i, name in enumerate(["x", "rules", "x"])]
    with pytest.raises(RecordError, match=r"2 of the 3 judged items .* another judge: 'x' \(2\); judge them"):
        require_judge(other, "rules", paths[:3])
    with pytest.raises(RecordError) as error:
        require_judge(other, "strict", paths[:3])
    assert str(error.value).endswith("another judge: 'rules' (1), 'x' (2); judge them again (`snakemake --forcerun judge_responses`)")


def test_a_sampled_models_runs_average_per_item_and_their_spread_is_reported():
    """Three runs of four items on two videos: accuracy is the mean of the runs' accuracies (= the mean of the items'
    means), `n` the items, n_correct every run's correct answers, accuracy_sd the runs' SD (ddof 1), min and max their
    range; the interval is the interval of the per-item means; a model run once keeps empty spread columns."""
    runs = {0: [True, True, False, False], 1: [True, False, False, False], 2: [True, True, True, False]}
    videos = ["v1", "v1", "v2", "v2"]
    judgments = [
        dataclasses.replace(_item(f"i{at}", videos[at], 64, right), sample=k)
        for k, of_run in runs.items()
        for at, right in enumerate(of_run)
    ]
    (score,) = [s for s in compute_scores(judgments) if (s.level, s.subset) == ("64", "overall")]
    per_run = [100 * sum(of_run) / 4 for of_run in runs.values()]  # 50, 25, 75
    assert score.samples == 3 and score.n == 4 and score.n_correct == 6
    assert score.accuracy == round(float(np.mean(per_run)), 4) == 50.0
    assert score.accuracy_sd == round(float(np.std(per_run, ddof=1)), 4) == 25.0
    assert (score.accuracy_min, score.accuracy_max) == (25.0, 75.0)
    means = [1.0, 2 / 3, 1 / 3, 0.0]  # per item, over the runs
    expected = compute_scores([_item(f"i{at}", videos[at], 64, True) for at in range(4)])[0]
    assert expected.samples == 1 and expected.accuracy_sd is None and expected.accuracy_min is None and expected.trust_sd is None
    assert score.ci_low is not None and score.ci_low <= 100 * float(np.mean(means)) <= score.ci_high
    # Kalai's trust score: 1 right, -1 wrong, per item averaged over its runs; the runs' trust scores' SD
    per_run_trust = [100 * np.mean([1 if right else -1 for right in of_run]) for of_run in runs.values()]
    assert score.trust == round(float(np.mean(per_run_trust)), 4)
    assert score.trust_sd == round(float(np.std(per_run_trust, ddof=1)), 4)


def test_a_sampled_models_interval_is_the_interval_of_its_per_item_means():
    """The sampled runs' interval equals the one computed for one run whose item values are the per-item means: the
    closed form below 50 videos is the share's (Wilson on the cluster design's n* items)."""
    runs = {0: [True, True, False, False, True, False], 1: [True, False, False, True, True, False]}
    videos = ["v1", "v1", "v2", "v2", "v3", "v3"]
    judgments = [
        dataclasses.replace(_item(f"i{at}", videos[at], 64, right), sample=k)
        for k, of_run in runs.items()
        for at, right in enumerate(of_run)
    ]
    (score,) = [s for s in compute_scores(judgments) if (s.level, s.subset) == ("64", "overall")]
    means = [float(np.mean([runs[k][at] for k in runs])) for at in range(6)]
    resampler = Resampler(videos, Bootstrap(), ("rules", "videos"))
    interval = resampler.interval(videos, means)
    assert (score.ci_low, score.ci_high) == (round(100 * interval.low, 4), round(100 * interval.high, 4))
    assert score.ci_method == interval.method == "clopper-pearson-cr2"


def _runs_of(of_item, unanswerable=()):
    """Judgments of a sampled model: `of_item` maps an item to its runs' judgments (True/False: right or wrong, or a
    Judgment to use as it is), item i on video v{i // 2}, run k recorded as sample k, every run 0 before run 1."""
    width = max(len(runs) for runs in of_item.values())
    found = []
    for k in range(width):
        for at, (name, runs) in enumerate(of_item.items()):
            if k < len(runs):
                run = runs[k]
                if isinstance(run, bool):
                    run = _item(name, f"v{at // 2}", 64, run, unanswerable=name in unanswerable, refused=run and name in unanswerable)
                found.append(dataclasses.replace(run, sample=k))
    return found


def test_two_runs_have_a_spread_and_their_means_keep_four_decimals():
    """Two runs (the fewest with a spread) of three items: accuracy 5/6 of the judgments, 83.3333 (four decimals);
    the refusal subset holds one item, so each run's number there is that item's value in the run, not half of it."""
    judgments = _runs_of({"i0": [True, True], "i1": [True, True], "i2": [False, True]}, unanswerable={"i2"})
    scores = _overall(judgments)
    overall, refusal = scores[("rules", "64", "overall")], scores[("rules", "64", "refusal")]
    assert (overall.samples, overall.n, overall.n_correct) == (2, 3, 5)
    assert overall.accuracy == 83.3333  # the mean of 66.667 and 100
    per_run = [200 / 3, 100.0]
    assert overall.accuracy_sd == round(float(np.std(per_run, ddof=1)), 4) == 23.5702
    assert (overall.accuracy_min, overall.accuracy_max) == (66.6667, 100.0)
    # Kalai: i2 answered where it should refuse (-1) in run 0 and refused (0) in run 1: item means 1, 1, -0.5
    assert overall.trust == 50.0
    assert overall.trust_sd == round(float(np.std([100 / 3, 200 / 3], ddof=1)), 4)
    assert (refusal.n, refusal.accuracy, refusal.accuracy_min, refusal.accuracy_max) == (1, 50.0, 0.0, 100.0)
    assert refusal.accuracy_sd == round(float(np.std([0, 100], ddof=1)), 4) and refusal.trust == -50.0


def test_a_sampled_models_counts_are_over_every_run_and_a_judge_failure_leaves_out_only_its_run():
    """The counts add up over the runs (each item's event in run 0, a right answer in run 1); an item's trust value is
    the mean over its scored runs: one judge failure leaves the other run's value whole, two leave the item out."""
    failed = _item("c", "v1", 64, True, valid=False)  # answered, no verdict
    judgments = _runs_of(
        {
            "a": [_item("a", "v0", 64, False, refused=True), True],  # a refusal where an answer was expected: 0
            "b": [dataclasses.replace(_item("b", "v0", 64, False, valid=False), truncated=True), True],  # withheld: 0
            "c": [failed, True],  # left out of run 0: the item's value is run 1's, 1
            "d": [dataclasses.replace(failed, instance_id="d"), dataclasses.replace(failed, instance_id="d")],  # left out
        }
    )
    score = _overall(judgments)[("rules", "64", "overall")]
    assert (score.samples, score.n, score.n_correct, score.n_invalid) == (2, 4, 3, 4)
    assert (score.n_wrong_refusal, score.n_truncated, score.n_judge_failed) == (1, 1, 3)
    assert score.accuracy == 37.5 and (score.accuracy_min, score.accuracy_max) == (0.0, 75.0)
    assert score.trust == round(100 * (0.5 + 0.5 + 1) / 3, 4)  # d has no scored run
    assert score.trust_sd == round(float(np.std([0, 100], ddof=1)), 4)  # run 0: a 0, b 0; run 1: a, b, c 1


def test_items_run_once_under_different_run_numbers_have_no_spread():
    """A number whose items were each run once has samples 1 and no spread, whatever run number each was recorded
    under (here one item is run 0's and the other run 1's)."""
    judgments = [dataclasses.replace(_item(f"i{k}", "v1", 64, k == 0), sample=k) for k in (0, 1)]
    score = _overall(judgments)[("rules", "64", "overall")]
    assert (score.samples, score.n, score.accuracy, score.trust) == (1, 2, 50.0, 0.0)
    assert (score.accuracy_sd, score.accuracy_min, score.accuracy_max, score.trust_sd) == (None, None, None, None)


def test_a_model_run_once_keeps_its_accuracy_digits():
    """A model run once: accuracy is 100 n_correct / n rounded, as before sampled runs (scores.csv unchanged), not
    100 times the float mean of the items, which differs in the fourth decimal for 23 of 640 (3.59375%)."""
    judgments = [_item(f"i{k}", f"v{k % 8}", 64, k < 23) for k in range(640)]
    assert _overall(judgments)[("rules", "64", "overall")].accuracy == 3.5938
    assert round(100 * float(np.mean([k < 23 for k in range(640)])), 4) == 3.5937  # what the mean would give


def test_no_judgments_give_no_scores():
    assert compute_scores([]) == []


def test_the_trust_score_is_bounded_over_its_judge_failures():
    """A judge failure is left out of the trust score; `trust_failed_best` and `trust_failed_worst` score every one as a
    right answer (1) and as a wrong one (the scheme's wrong-answer score) over all the row's items, so they bracket the
    trust score; a row without a judge failure has no bound."""
    failure = dataclasses.replace(_item("b", "v1", 64, True, unanswerable=True, valid=False), decided_by="none")
    judgments = [
        _item("a", "v1", 64, True),
        failure,
        dataclasses.replace(failure, instance_id="c", video_id="v2"),
        _item("d", "v2", 64, True, unanswerable=True, refused=True),  # the due refusal: Kalai 0, refusal-credit 1
        _item("e", "v3", 64, False),
    ]
    for trust in (TrustWeights(confidence_target=0.75), TrustWeights(-2.0, -0.5, scheme="refusal-credit")):
        scores = _overall(judgments, trust=trust)
        score = scores[("rules", "64", "overall")]
        scored = [trust.value(j) for j in judgments if trust.value(j) is not None]
        assert score.n_judge_failed == 2 and score.trust == round(100 * sum(scored) / 3, 4)
        assert score.trust_failed_best == round(100 * (sum(scored) + 2 * 1) / 5, 4)
        assert score.trust_failed_worst == round(100 * (sum(scored) + 2 * trust.wrong) / 5, 4)
        assert score.trust_failed_worst < score.trust < score.trust_failed_best
        refusal = scores[("rules", "64", "refusal")]  # b and c failed, d refused: the row's own items
        assert refusal.n_judge_failed == 2
        assert (refusal.trust_failed_best, refusal.trust_failed_worst) == (
            round(100 * (trust.value(judgments[3]) + 2) / 3, 4),
            round(100 * (trust.value(judgments[3]) + 2 * trust.wrong) / 3, 4),
        )
        answerable = scores[("rules", "64", "non_refusal")]  # a and e: no failure, no bound
        assert (answerable.n_judge_failed, answerable.trust_failed_best, answerable.trust_failed_worst) == (0, None, None)
    # every item failed: no trust score, and its bounds are the two extremes
    alone = _overall([failure])[("rules", "64", "overall")]
    assert (alone.trust, alone.trust_failed_best, alone.trust_failed_worst) == (None, 100.0, -100.0)


def test_a_sampled_models_failure_bounds_average_each_item_over_all_its_runs():
    """A sampled model's bound is per item, as its trust score: the mean over all the item's runs with its failed runs
    scored 1 or the wrong answer's score, then the mean over the items (an item whose runs all failed counts too)."""
    failed = _item("c", "v1", 64, True, valid=False)  # answered, no verdict
    judgments = _runs_of(
        {
            "a": [True, False],  # 1 and -1: 0
            "c": [failed, True],  # best (1 + 1) / 2, worst (-1 + 1) / 2
            "d": [dataclasses.replace(failed, instance_id="d"), dataclasses.replace(failed, instance_id="d")],
            "e": [False, False, True],  # a third run: (-1 - 1 + 1) / 3
        }
    )
    score = _overall(judgments)[("rules", "64", "overall")]
    assert score.n_judge_failed == 3 and score.trust == round(100 * (0 + 1 - 1 / 3) / 3, 4)
    assert score.trust_failed_best == round(100 * (0 + 1 + 1 - 1 / 3) / 4, 4)
    assert score.trust_failed_worst == round(100 * (0 + 0 - 1 - 1 / 3) / 4, 4)


def _mixed_judgments(seed=5):
    """Judgments of every outcome (valid or not, truncated, failed requests, missing responses, refusals, judgements
    other than 0/1), two models, a sampled one with a run missing here and there and one item's run recorded twice."""
    rng = np.random.default_rng(seed)
    made = []
    for model, runs, prompt in (("once", [None], "honest"), ("once", [None], "plain"), ("sampled", [0, 1, 2], "honest")):
        for i in range(60):
            for level in (64, 128):
                for sample in runs:
                    if sample == 2 and i % 7 == 0:
                        continue
                    valid, truncated = bool(rng.random() < 0.8), bool(rng.random() < 0.1)
                    made.append(
                        dataclasses.replace(
                            _judgment(i, level, bool(i % 3 == 0), bool(rng.random() < 0.5), valid=valid, prompt=prompt),
                            model=model,
                            video_id=f"v{i % 25}",
                            refusal=int(rng.integers(0, 2)),
                            judgement=int(rng.integers(-1, 3)),
                            truncated=truncated and not valid,
                            error=str(rng.choice(["failed", ""])) if rng.random() < 0.1 else None,
                            response=str(rng.choice(["r", ""])) if rng.random() < 0.9 else None,  # "": an empty reply
                            sample=sample,
                        )
                    )
    made.append(dataclasses.replace(made[-1], judgement=1 - made[-1].judgement, valid=True))  # a run recorded twice
    return made


@pytest.mark.parametrize("scoring", [Scoring(), Scoring("drop")], ids=["wrong", "drop"])
@pytest.mark.parametrize("trust", [TrustWeights(), TrustWeights(-2.0, -0.5, "refusal-credit")], ids=["kalai", "refusal-credit"])
def test_items_are_gathered_as_each_judgment_scores(trust, scoring):
    """_gather's arrays against correct(), TrustWeights.value() and Scoring.drops() called judgment by judgment."""
    from virtuebench.metrics import _gather, correct, judge_failed

    judgments = _mixed_judgments()
    gathered = _gather(judgments, trust, scoring)
    keys = [(j.judge, j.model, j.prompt, j.level, j.instance_id) for j in judgments]
    items = list(dict.fromkeys(keys))
    assert [(j.judge, j.model, j.prompt, j.level, j.instance_id) for j in gathered.first] == items
    assert all(gathered.first[at] is judgments[keys.index(key)] for at, key in enumerate(items))
    slots = sorted({j.sample or 0 for j in judgments})
    for at, key in enumerate(items):
        runs = [j for j, k in zip(judgments, keys) if k == key]
        assert gathered.samples[at] == len(runs)
        assert gathered.counts["correct"][at] == sum(correct(j) for j in runs)
        assert gathered.counts["invalid"][at] == sum(not j.valid for j in runs)
        assert gathered.counts["wrong_refusal"][at] == sum(j.valid and j.refusal == 1 and j.judgement != 1 for j in runs)
        assert gathered.counts["truncated"][at] == sum(j.truncated for j in runs)
        assert gathered.counts["failed"][at] == sum(judge_failed(j) for j in runs)
        assert gathered.counts["dropped"][at] == sum(scoring.drops(j) for j in runs)
        last = {slots.index(j.sample or 0): j for j in runs}  # a run recorded twice: its last judgment
        kept = {c: j for c, j in last.items() if not scoring.drops(j)}
        expected_right = [float(correct(kept[c])) if c in kept else np.nan for c in range(gathered.runs.shape[1])]
        value = [trust.value(kept[c]) if c in kept else None for c in range(gathered.runs.shape[1])]
        expected_values = [np.nan if v is None else v for v in value]
        bounded = [c in kept or (c in last and judge_failed(last[c])) for c in range(gathered.runs.shape[1])]
        assert np.array_equal(gathered.runs[at], expected_right, equal_nan=True)
        assert np.array_equal(gathered.run_values[at], expected_values, equal_nan=True)
        assert gathered.bounded[at].tolist() == bounded
        n_kept = len(runs) - gathered.counts["dropped"][at]
        if len(slots) > 1 and n_kept:  # a sampled item's mean over its runs not dropped (a twice-recorded run: both)
            assert gathered.right[at] == pytest.approx(np.nansum(expected_right) / n_kept)
        elif len(slots) > 1:
            assert np.isnan(gathered.right[at])
    assert gathered.counts["failed"].sum() > 0 and gathered.counts["truncated"].sum() > 0 and gathered.samples.max() == 4
    assert (gathered.counts["dropped"].sum() > 0) == (scoring.invalid == "drop")
    assert all(count.dtype.kind == "i" for count in gathered.counts.values())
    assert (
        len({j.prompt for j in gathered.first}) == 2 and any(j.response == "" for j in judgments) and any(j.error == "" for j in judgments)
    )


def test_a_resample_cache_changes_no_score(tmp_path, monkeypatch):
    narrow_closed_forms(monkeypatch)  # so that BCa, which reads the cache, is chosen (tests/helpers/intervals.py)
    judgments = [dataclasses.replace(j, video_id=f"v{j.instance_id[1:]}") for j in _mixed_judgments(6)]
    plain = compute_scores(judgments, Bootstrap(300, 1))
    cache = str(tmp_path / "resamples")
    assert compute_scores(judgments, Bootstrap(300, 1, cache=cache)) == plain  # drawn and kept
    assert any((tmp_path / "resamples").glob("*.resamples"))
    assert compute_scores(judgments, Bootstrap(300, 1, cache=cache)) == plain  # read back
    assert {s.ci_method for s in plain} >= {"bca"}


def test_groups_hold_their_items_in_order_and_come_in_the_order_of_their_first_item():
    """_groups against the loop it replaces: each (model, prompt, level) group and each model's `all`, in item order,
    the groups in the order their first item comes (the intra-video correlation adds them up in this order)."""
    from virtuebench.metrics import _groups

    rng = np.random.default_rng(1)
    items = [
        dataclasses.replace(_judgment(i, int(rng.choice([64, 128, 256])), False, True), model=str(rng.choice(["b", "a", "c"])))
        for i in range(600)
    ]
    expected: dict[tuple[str, str, str, str], list[int]] = {}
    for at, item in enumerate(items):
        expected.setdefault((item.judge, item.model, item.prompt, str(item.level)), []).append(at)
        expected.setdefault((item.judge, item.model, item.prompt, "all"), []).append(at)
    found = _groups(items)
    assert list(found) == list(expected)
    assert all(found[key].tolist() == at for key, at in expected.items())
    assert _groups([]) == {}


def test_the_cli_keeps_the_drawn_weights_for_the_comparisons(tmp_path):
    """--resample-cache: the weights the scores drew are in the folder, and the scores are those without it."""
    judgments = [dataclasses.replace(j, video_id=f"v{j.instance_id[1:]}") for j in _mixed_judgments(6)[:-1]]  # no run twice
    write_jsonl_atomic(tmp_path / "j.jsonl", judgments)
    common = ["--resamples", "200", "--seed", "1", "--trust-scheme", "kalai", "--confidence-target", "0.5"]
    common += ["--wrong-answer", "-1", "--unwarranted-refusal", "0", "--invalid", "wrong", "--categories", "{}"]
    cache = tmp_path / "cache" / "resamples"
    assert metrics_main([str(tmp_path / "j.jsonl"), "--out", str(tmp_path / "cached.csv"), "--resample-cache", str(cache), *common]) == 0
    assert metrics_main([str(tmp_path / "j.jsonl"), "--out", str(tmp_path / "plain.csv"), *common]) == 0
    assert len(list(cache.glob("*.resamples"))) >= 1
    assert read_scores(tmp_path / "cached.csv") == read_scores(tmp_path / "plain.csv")


# --- report.invalid and report.categories (issue 50): what counts in a number ----------------------------------------


def _outcomes_of_every_kind():
    """A right answer, a judge failure (an answer, no verdict), a truncated reply, a missing response and a wrong
    answer, each on its own video."""
    return [
        _item("a", "v1", 64, True),
        dataclasses.replace(_item("b", "v2", 64, True, valid=False), decided_by="none"),
        dataclasses.replace(_item("c", "v3", 64, False, valid=False), truncated=True),
        dataclasses.replace(_item("d", "v4", 64, False, valid=False), response=None, error="backend error"),
        _item("e", "v5", 64, False),
    ]


def test_drop_leaves_items_without_a_response_or_a_verdict_out_of_n_and_keeps_counting_them():
    """`wrong` (the default) counts all three invalid items wrong; `drop` leaves out the judge failure and the missing
    response (not the truncated reply, the model's own answer cut short): n, accuracy, videos and the trust score are
    over the three items left, while n_invalid still counts all three and n_dropped the two left out."""
    judgments = _outcomes_of_every_kind()
    wrong = _overall(judgments)[("rules", "64", "overall")]
    assert (wrong.n, wrong.n_correct, wrong.accuracy, wrong.n_invalid, wrong.n_dropped, wrong.n_videos) == (5, 1, 20.0, 3, 0, 5)
    assert wrong.trust == -25.0  # a 1, c 0, d -1, e -1 over 4 (b, the judge failure, left out)
    dropped = _overall(judgments, scoring=Scoring("drop"))[("rules", "64", "overall")]
    assert (dropped.n, dropped.n_correct, dropped.accuracy, dropped.n_invalid, dropped.n_dropped) == (3, 1, 33.3333, 3, 2)
    assert (dropped.n_videos, dropped.n_judge_failed, dropped.n_truncated) == (3, 1, 1)
    assert dropped.trust == 0.0  # a 1, c 0, e -1: d no longer charged
    # the judge failure's bounds stay (it is still the one item nobody judged), over every item but the missing response
    assert (dropped.trust_failed_best, dropped.trust_failed_worst) == (25.0, -25.0)
    assert (wrong.trust_failed_best, wrong.trust_failed_worst) == (0.0, -40.0)
    # the intervals are those of the items kept, as if the dropped ones had never been judged
    alone = _overall([judgments[0], judgments[2], judgments[4]])[("rules", "64", "overall")]
    for name in ("accuracy", "ci_low", "ci_high", "ci_method", "trust", "trust_ci_low", "trust_ci_high", "n", "n_videos"):
        assert getattr(dropped, name) == getattr(alone, name), name
    assert (wrong.ci_low, wrong.ci_high) != (dropped.ci_low, dropped.ci_high)


def test_an_item_whose_every_run_was_dropped_warns_of_nothing():
    """Its judge-failure bounds divide 0 by its 0 runs: numpy's warning would fill the scoring job's log, about a
    number no row reads."""
    import warnings

    missing = dataclasses.replace(_item("z", "v9", 64, False), valid=False, response=None, error="failed")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scores = _overall([_item("a", "v1", 64, True), missing], scoring=Scoring("drop"))
    assert (scores[("rules", "64", "overall")].n, scores[("rules", "64", "overall")].n_dropped) == (1, 1)


def test_drop_changes_nothing_where_every_verdict_is_valid_and_a_wholly_dropped_subset_has_no_row():
    judgments = [_item(f"i{k}", f"v{k % 3}", 64, k % 2 == 0, unanswerable=k > 5, refused=k == 7) for k in range(9)]
    assert compute_scores(judgments, scoring=Scoring("drop")) == compute_scores(judgments)
    missing = dataclasses.replace(_item("z", "v9", 64, False, unanswerable=True), valid=False, response=None, error="failed")
    only_refusal_dropped = _overall([_item("a", "v1", 64, True), missing], scoring=Scoring("drop"))
    assert ("rules", "64", "refusal") not in only_refusal_dropped  # its one item dropped: no number
    overall = only_refusal_dropped[("rules", "64", "overall")]
    assert (overall.n, overall.n_invalid, overall.n_dropped, overall.accuracy) == (1, 1, 1, 100.0)


def test_drop_averages_a_sampled_item_over_its_runs_kept():
    failed = _item("c", "v1", 64, True, valid=False)  # answered, no verdict
    missing = dataclasses.replace(failed, instance_id="d", response=None, error="failed")
    judgments = _runs_of(
        {"a": [True, False], "c": [failed, True], "d": [missing, missing], "e": [dataclasses.replace(missing, instance_id="e"), True]}
    )
    wrong = _overall(judgments)[("rules", "64", "overall")]
    assert (wrong.n, wrong.accuracy, wrong.n_dropped) == (4, round(100 * (0.5 + 0.5 + 0 + 0.5) / 4, 4), 0)
    dropped = _overall(judgments, scoring=Scoring("drop"))[("rules", "64", "overall")]
    # a: (1 + 0) / 2; c and e: their one run kept, 1; d: every run dropped, out of n
    assert (dropped.n, dropped.accuracy, dropped.n_dropped, dropped.n_invalid, dropped.samples) == (3, 83.3333, 4, 4, 2)
    assert (dropped.accuracy_min, dropped.accuracy_max) == (66.6667, 100.0)  # run 0: a right (c, e dropped); run 1: a wrong, c, e right
    assert dropped.trust == 66.6667  # a (1 - 1) / 2, c 1, e 1
    # the bounds: a 0 either way; c (1 + 1) / 2 or (-1 + 1) / 2 over its two runs; e 1 over its one run not dropped; d none
    assert (dropped.trust_failed_best, dropped.trust_failed_worst) == (round(100 * (0 + 1 + 1) / 3, 4), round(100 * (0 + 0 + 1) / 3, 4))


def test_the_category_mapping_scores_task_types_in_another_category_and_leaves_the_rest():
    judgments = [
        _item("a", "v1", 64, True),
        dataclasses.replace(_item("b", "v2", 64, False), task_type="plot", category="reasoning"),
        dataclasses.replace(_item("c", "v3", 64, True), task_type="timing"),
    ]
    adapters = _overall(judgments)
    assert (adapters[("rules", "64", "perception")].n, adapters[("rules", "64", "reasoning")].n) == (2, 1)
    mapped = _overall(judgments, scoring=Scoring.of(categories={"timing": "reasoning", "absent": "perception"}))
    assert (mapped[("rules", "64", "perception")].n, mapped[("rules", "64", "reasoning")].n) == (1, 2)
    assert mapped[("rules", "64", "reasoning")].n_correct == 1 and mapped[("rules", "64", "perception")].accuracy == 100.0
    assert mapped[("rules", "64", "overall")] == adapters[("rules", "64", "overall")]
    everything = _overall(judgments, scoring=Scoring.of(categories={"colour": "reasoning", "timing": "reasoning"}))
    assert ("rules", "64", "perception") not in everything and everything[("rules", "64", "reasoning")].n == 3


def test_scoring_settings_are_checked_with_their_config_names():
    with pytest.raises(ValueError, match=r"report.invalid: 'skip' is not one of wrong, drop"):
        Scoring("skip")
    with pytest.raises(ValueError, match=r"report.categories: task type 'plot' maps to 'story', not one of perception, reasoning"):
        Scoring.of(categories={"plot": "story"})
    assert Scoring.of("drop", {"b": "reasoning", "a": "perception"}).categories == (("a", "perception"), ("b", "reasoning"))


def test_the_cli_applies_the_scoring_options_and_refuses_a_bad_mapping_in_one_line(tmp_path, capsys):
    first, _ = _cli_judgments(tmp_path)  # a right answer and a judge failure
    options = {
        **CLI_OPTIONS,
        "--out": str(tmp_path / "s.csv"),
        "--invalid": "drop",
        "--categories": '{"colour": "reasoning", "nope": "reasoning"}',
    }
    assert metrics_main([str(first), *[part for pair in options.items() for part in pair]]) == 0
    scores = {(s.level, s.subset): s for s in read_scores(tmp_path / "s.csv")}
    assert (scores[("64", "overall")].n, scores[("64", "overall")].n_dropped, scores[("64", "overall")].accuracy) == (1, 1, 100.0)
    assert ("64", "perception") not in scores and scores[("64", "reasoning")].n == 1
    assert "WARNING: report.categories maps task types no judged item has: ['nope']; they change no number" in capsys.readouterr().err
    for value, message in [
        ("[1]", "report.categories: --categories '[1]' is not a mapping of task type to category"),
        ("{", "report.categories: --categories '{' is not JSON"),
        ('{"colour": "story"}', "report.categories: task type 'colour' maps to 'story'"),
        ('{"colour": 1}', "report.categories: task type 'colour' maps to 1, not one of perception, reasoning"),
    ]:
        with pytest.raises(SystemExit) as exited:
            metrics_main([str(first), *[part for pair in {**options, "--categories": value}.items() for part in pair]])
        said = capsys.readouterr().err
        assert exited.value.code == 2 and message in said and "Traceback" not in said


def test_the_scoring_options_default_to_wrong_and_no_mapping_where_not_required():
    """The browser's CLI takes them as options (its callers outside the workflow need not name them)."""
    import argparse

    from virtuebench.metrics import add_scoring_arguments, scoring_from_arguments

    parser = argparse.ArgumentParser()
    add_scoring_arguments(parser, required=False)
    assert scoring_from_arguments(parser.parse_args([])) == Scoring()
    chosen = parser.parse_args(["--invalid", "drop", "--categories", '{"plot": "reasoning"}'])
    assert scoring_from_arguments(chosen) == Scoring("drop", (("plot", "reasoning"),))
    strict = argparse.ArgumentParser()
    add_scoring_arguments(strict)
    with pytest.raises(SystemExit):
        strict.parse_args(["--invalid", "drop"])
