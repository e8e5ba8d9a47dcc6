import dataclasses
import json
import subprocess
import sys

import numpy as np
import pytest

from virtuebench.metrics import TrustWeights, compute_scores, read_scores, write_scores
from virtuebench.records import Judgment
from virtuebench.support.bootstrap import bounded_mean_fallback


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
        _item("f", "v3", 64, False, valid=False),  # no verdict: counted as a wrong answer
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
    rng = np.random.default_rng(0)
    judgments = [_item(f"i{v}_{k}", f"v{v}", 64, bool(rng.random() < 0.6)) for v in range(30) for k in range(4)]
    score = next(s for s in compute_scores(judgments) if (s.level, s.subset) == ("64", "overall"))
    assert score.ci_low < score.accuracy < score.ci_high and score.n_videos == 30
    # Against an independent computation: a plain percentile cluster bootstrap (its own draws, numpy only) of the
    # same 30 videos gives nearly the same interval; resampling items instead would give a narrower one.
    own = np.random.default_rng(99)
    per_video = np.array([[j.judgement for j in judgments if j.video_id == f"v{v}"] for v in range(30)], dtype=float)
    draws = own.integers(0, 30, size=(8000, 30))
    means = 100 * per_video[draws].mean(axis=(1, 2))
    low, high = np.percentile(means, [2.5, 97.5])
    assert abs(score.ci_low - low) < 3 and abs(score.ci_high - high) < 3, (score.ci_low, score.ci_high, low, high)
    assert score.ci_method == "bca"
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


def test_the_cli_warns_when_judgments_lack_their_video(tmp_path):
    path = tmp_path / "j.jsonl"
    lines = [json.dumps({k: v for k, v in dataclasses.asdict(_item(f"i{k}", None, 64, True)).items() if k != "video_id"}) for k in range(3)]
    path.write_text("\n".join(lines) + "\n")
    cli = [sys.executable, "-m", "virtuebench.metrics", str(path), "--out", str(tmp_path / "s.csv"), "--seed", "0"]
    trust = ["--trust-scheme", "kalai", "--confidence-target", "0.5"]
    run = subprocess.run(
        [*cli, *trust, "--resamples", "200", "--wrong-answer", "-1", "--unwarranted-refusal", "0"], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    assert "3 judgments have no video_id" in run.stderr
    bad = subprocess.run(
        [*cli, *trust, "--resamples", "200", "--wrong-answer", "1", "--unwarranted-refusal", "0"], capture_output=True, text=True
    )
    assert bad.returncode == 2 and "wrong_answer < unwarranted_refusal" in bad.stderr


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
            assert method in ("bca", "clopper-pearson-deff", "wilson-deff", "agresti-coull-deff"), s
    methods = {(s.model, s.subset): (s.ci_method, s.trust_ci_method) for s in scores if s.level == "64"}
    assert methods[("right", "overall")] == ("clopper-pearson-deff", "agresti-coull-deff")  # every item right
    assert methods[("wrong", "overall")] == ("clopper-pearson-deff", "agresti-coull-deff")  # every item wrong
    assert methods[("alone", "overall")] == ("wilson-deff", "agresti-coull-deff")  # one video


def test_the_trust_fallback_uses_the_trust_scores_own_intra_video_correlation():
    """Half the videos hold only unanswerable items, refused (correct, trust 0), half only answerable items
    answered right (trust 1): correctness is the same everywhere (no intra-video correlation), the trust score is
    constant within each video and differs between them (correlation 1). On the refusal subset both intervals
    fall back: accuracy's on its 18 items, the trust score's on its 6 videos (n_eff = 18 / (1 + 2 x 1))."""
    judgments = [_item(f"u{v}_{k}", f"u{v}", 64, True, unanswerable=True, refused=True) for v in range(6) for k in range(3)]
    judgments += [_item(f"a{v}_{k}", f"a{v}", 64, True) for v in range(6) for k in range(3)]
    refusal = next(s for s in compute_scores(judgments) if (s.level, s.subset) == ("64", "refusal"))
    assert refusal.ci_method == "clopper-pearson-deff" and refusal.ci_low == pytest.approx(100 * 0.025 ** (1 / 18), abs=1e-3)
    on_videos = bounded_mean_fallback([0.0] * 6, (-1.0, 1.0), 6, 0.0)  # 6 independent items
    assert refusal.trust_ci_method == "agresti-coull-deff"
    assert (refusal.trust_ci_low, refusal.trust_ci_high) == pytest.approx((100 * on_videos.low, 100 * on_videos.high), abs=1e-3)
