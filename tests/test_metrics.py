from virtuebench.metrics import compute_scores, read_scores, write_scores
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
