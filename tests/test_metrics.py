import dataclasses
import json
import subprocess
import sys

import numpy as np
import pytest

from virtuebench.metrics import TrustWeights, compute_scores, read_scores, write_scores
from virtuebench.records import Judgment


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
