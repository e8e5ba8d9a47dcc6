"""Paired comparisons (virtuebench.comparisons): which pairs, on which items, and the CSV's contract."""

from __future__ import annotations

import csv
import subprocess
import sys

import numpy as np
import pytest

from virtuebench.comparisons import Arm, compare, pairs
from virtuebench.records import Judgment, to_json_line
from virtuebench.support.bootstrap import Bootstrap

SETTINGS = Bootstrap(resamples=500, seed=0)
CONTRACT = ["model_a", "prompt_a", "model_b", "prompt_b", "level", "subset", "difference", "ci_low", "ci_high", "p_value", "n"]


def _judgment(instance, video, level, model, prompt, correct, unanswerable=False, judge="rules"):
    return Judgment(
        instance,
        model,
        prompt,
        level,
        judge,
        "perception",
        "t",
        "x",
        unanswerable,
        "r",
        0,
        int(correct),
        True,
        "",
        None,
        "fp",
        video_id=video,
    )


def test_pairs_are_prompt_effects_adjacent_models_and_configured_ones_once_each():
    chosen = pairs(
        ["a", "b", "c"], ["honest", "plain"], "honest", [(Arm("a", "honest"), Arm("c", "plain")), (Arm("a", "honest"), Arm("b", "honest"))]
    )
    assert chosen == [
        ("prompt", Arm("a", "honest"), Arm("a", "plain")),
        ("prompt", Arm("b", "honest"), Arm("b", "plain")),
        ("prompt", Arm("c", "honest"), Arm("c", "plain")),
        ("adjacent", Arm("a", "honest"), Arm("b", "honest")),
        ("adjacent", Arm("b", "honest"), Arm("c", "honest")),
        ("config", Arm("a", "honest"), Arm("c", "plain")),
        ("config", Arm("a", "honest"), Arm("b", "honest")),
    ]
    assert Arm.parse("m:plain", "honest") == Arm("m", "plain") and Arm.parse("m", "honest") == Arm("m", "honest")


def test_a_prompt_effect_is_measured_on_the_items_both_prompts_answered():
    rng = np.random.default_rng(1)
    judgments = []
    for v in range(30):
        for k in range(3):
            unanswerable = k == 0
            judgments.append(
                _judgment(f"q{v}_{k}", f"v{v}", 64, "m", "honest", rng.random() < (0.9 if unanswerable else 0.5), unanswerable)
            )
            judgments.append(_judgment(f"q{v}_{k}", f"v{v}", 64, "m", "plain", rng.random() < (0.2 if unanswerable else 0.5), unanswerable))
    judgments.append(_judgment("only_honest", "v99", 64, "m", "honest", True))  # not paired: left out
    judgments.append(_judgment("q0_0", "v0", 64, "m", "plain", False, judge="other"))  # another judge: left out
    rows, notes = compare(judgments, pairs(["m"], ["honest", "plain"], "honest"), "rules", SETTINGS)
    assert notes == []
    by = {(r.level, r.subset): r for r in rows}
    assert set(by) == {(level, subset) for level in ("64", "all") for subset in ("overall", "non_refusal", "refusal")}
    refusal = by[("64", "refusal")]
    honest = [j for j in judgments if j.prompt == "honest" and j.is_unanswerable and j.instance_id != "only_honest"]
    plain = [j for j in judgments if j.prompt == "plain" and j.is_unanswerable and j.judge == "rules"]
    assert refusal.n == 30 and refusal.n_videos == 30
    assert refusal.difference == round(100 * (sum(j.judgement for j in honest) - sum(j.judgement for j in plain)) / 30, 4)
    assert refusal.ci_low < refusal.difference < refusal.ci_high
    assert refusal.p_value < 0.01 and refusal.holds and refusal.p_holm >= refusal.p_value
    assert by[("64", "overall")].n == 90


def test_identical_arms_have_no_difference_and_p_one():
    judgments = [_judgment(f"q{i}", f"v{i % 5}", 64, model, "honest", i % 3 == 0) for i in range(20) for model in ("a", "b")]
    rows, _ = compare(judgments, pairs(["a", "b"], ["honest"], "honest"), "rules", SETTINGS)
    assert rows and all(r.difference == 0 and r.p_value == 1.0 and not r.holds for r in rows)
    # every paired difference is 0, so every resample is 0: the interval falls back and does not collapse to [0, 0]
    assert all(r.ci_method == "bonett-price-cr2" and r.ci_low < 0 < r.ci_high for r in rows)


def test_comparisons_fall_back_on_few_videos_and_use_the_bootstrap_elsewhere():
    rng = np.random.default_rng(3)
    # a and b: 60 videos of 1-7 items, each arm right on all of a video's items or on none (the paired differences
    # are constant within a video): from 50 videos on the paired bootstrap's BCa interval where it is wider than
    # Bonett-Price's on the cluster design, as here (where the differences vary within videos the closed form, which
    # counts at most one pair a video, is usually the wider)
    judgments = []
    sizes = rng.integers(1, 8, size=60)
    for v in range(60):
        right_a, right_b = bool(rng.random() < 0.5), bool(rng.random() < 0.5)
        for k in range(sizes[v]):
            judgments.append(_judgment(f"q{v}_{k}", f"v{v}", 64, "a", "honest", right_a))
            judgments.append(_judgment(f"q{v}_{k}", f"v{v}", 64, "b", "honest", right_b))
    # c against d: 12 items on one video, a every third item apart
    judgments += [_judgment(f"o{k}", "alone", 128, "c", "honest", True) for k in range(12)]
    judgments += [_judgment(f"o{k}", "alone", 128, "d", "honest", k % 3 != 0) for k in range(12)]
    rows, _ = compare(judgments, pairs(["a", "b", "c", "d"], ["honest"], "honest"), "rules", SETTINGS)
    by = {(r.model_a, r.level, r.subset): r for r in rows}
    wide = by[("a", "64", "overall")]
    assert wide.ci_method == "bca" and wide.ci_low < wide.difference < wide.ci_high
    alone = by[("c", "128", "overall")]
    assert alone.n_videos == 1 and alone.ci_method == "bonett-price-cr2" and alone.ci_low < alone.difference < alone.ci_high


def test_a_pair_without_common_items_is_named_and_the_cli_writes_the_contract_columns(tmp_path):
    judgments = [_judgment(f"q{i}", f"v{i}", 64, "a", "honest", True) for i in range(4)]
    judgments += [_judgment(f"q{i}", f"v{i}", 64, "b", "honest", i % 2 == 0) for i in range(4)]
    judgments += [_judgment("z", "vz", 128, "c", "honest", True)]
    path = tmp_path / "j.jsonl"
    path.write_text("".join(to_json_line(j) for j in judgments))
    out = tmp_path / "comparisons.csv"
    command = [sys.executable, "-m", "virtuebench.comparisons", str(path), "--models", "a", "b", "c", "--prompts", "honest"]
    run = subprocess.run(
        [
            *command,
            "--prompt",
            "honest",
            "--judge",
            "rules",
            "--pair",
            "a",
            "c:honest",
            "--resamples",
            "200",
            "--seed",
            "0",
            "--holm-family",
            "table",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert "b:honest and c:honest have no judged item in common" in run.stderr and "a:honest and c:honest" in run.stderr
    rows = list(csv.DictReader(out.open()))
    assert set(CONTRACT) <= set(rows[0]) and {(r["model_a"], r["model_b"]) for r in rows} == {("a", "b")}
    assert all(r["ci_method"] in ("bca", "bonett-price-cr2") for r in rows)
    overall = next(r for r in rows if (r["level"], r["subset"]) == ("64", "overall"))
    assert float(overall["difference"]) == 50.0 and int(overall["n"]) == 4


def test_the_cli_says_in_one_line_that_scipy_is_missing(tmp_path, capsys, monkeypatch):
    from virtuebench.comparisons import main
    from virtuebench.support import bootstrap

    path = tmp_path / "j.jsonl"
    path.write_text("".join(to_json_line(_judgment(f"q{i}", f"v{i}", 64, m, "honest", i % 2 == 0)) for i in range(4) for m in "ab"))
    monkeypatch.setitem(sys.modules, "scipy.special", None)  # import scipy.special then raises ImportError
    bootstrap._t_quantile.cache_clear()
    try:
        options = ["--models", "a", "b", "--prompts", "honest", "--prompt", "honest", "--out", str(tmp_path / "c.csv")]
        options += ["--judge", "rules", "--resamples", "50", "--seed", "0", "--holm-family", "table"]
        assert main([str(path), *options]) == 1
    finally:
        bootstrap._t_quantile.cache_clear()
    said = capsys.readouterr().err
    assert said.startswith("error: scipy is not installed for ") and said.count("\n") == 1
    assert not (tmp_path / "c.csv").exists()


def _row(level, p, p_min=1e-6, p_mc_se=0.0, kind="prompt"):
    """A comparison row with the fields Holm's adjustment reads."""
    from virtuebench.comparisons import Comparison

    fixed = dict(judge="rules", subset="overall", model_a="m", prompt_a="honest", model_b="m", prompt_b="plain", accuracy_a=50)
    fixed |= dict(accuracy_b=40, difference=10, ci_low=1, ci_high=19, p_holm=None, in_family=False, holds=False, near_alpha=False)
    method = "monte-carlo" if p_mc_se else "exact"
    return Comparison(
        kind=kind, level=level, p_value=p, p_method=method, p_mc_se=p_mc_se, p_min=p_min, n=20, n_videos=5, ci_method="bca", **fixed
    )


def test_holm_family_is_the_table_by_default_or_each_level():
    from virtuebench.comparisons import _adjust

    row = _row
    rows = [row("64", 0.01), row("128", 0.02), row("256", 0.04)]
    table = [r.p_holm for r in _adjust(rows)]
    level = [r.p_holm for r in _adjust(rows, "level")]
    assert table == pytest.approx([0.03, 0.04, 0.04]) and level == pytest.approx([0.01, 0.02, 0.04])
    with pytest.raises(ValueError, match="holm_family"):
        _adjust(rows, "global")


def test_holm_leaves_out_the_rows_that_cannot_reach_005_tarone():
    """A row whose test cannot go below 0.05 (p_min: 2/2^k, k its discordant videos) cannot be a false "holds":
    out of the family, it does not raise the others' multiplier. With report.holm_tarone false every row counts."""
    from virtuebench.comparisons import _adjust

    rows = [_row("64", 0.02, p_min=2 / 64), _row("128", 1.0, p_min=1.0), _row("256", 0.125, p_min=0.125), _row("512", 0.03, p_min=2 / 4096)]
    tarone = _adjust(rows)
    assert [r.in_family for r in tarone] == [True, False, False, True]
    assert [r.p_holm for r in tarone] == [pytest.approx(0.04), None, None, pytest.approx(0.04)]
    assert [r.holds for r in tarone] == [True, False, False, True]
    every = _adjust(rows, tarone=False)
    assert all(r.in_family for r in every) and [r.p_holm for r in every] == pytest.approx([0.08, 1.0, 0.25, 0.09])
    assert not any(r.holds for r in every)


def test_a_verdict_within_two_monte_carlo_errors_of_005_is_flagged():
    from virtuebench.comparisons import _adjust

    near, far, exact = _row("64", 0.046, p_mc_se=0.003), _row("128", 0.001, p_mc_se=0.0002), _row("256", 0.046)
    flagged = _adjust([near, far], "level") + _adjust([exact], "level")
    assert [r.holds for r in flagged] == [True, True, True] and [r.near_alpha for r in flagged] == [True, False, False]
    # in one family the sampled row's error also moves the exact row's Holm multiplier: both are flagged
    together = _adjust([_row("64", 0.02, p_mc_se=0.006), _row("64", 0.026)])
    assert [r.holds for r in together] == [True, True] and [r.near_alpha for r in together] == [True, True]


def test_twelve_videos_all_one_way_get_the_exact_p_value():
    """The demo's oracle honest-vs-plain refusal row: 12 videos, each with honest right and plain wrong on its
    unanswerable items: p = 2/4096 exactly (1/4096 as a mid-p), in the family and holding on its own."""
    judgments = []
    for v in range(12):
        for k in range(1 + v % 3):
            judgments.append(_judgment(f"q{v}_{k}", f"v{v}", 64, "oracle", "honest", True, unanswerable=True))
            judgments.append(_judgment(f"q{v}_{k}", f"v{v}", 64, "oracle", "plain", False, unanswerable=True))
    chosen = pairs(["oracle"], ["honest", "plain"], "honest")
    for definition, expected in (("conventional", 0.000488), ("mid-p", 0.000244)):
        rows, _ = compare(judgments, chosen, "rules", SETTINGS, p_value=definition)
        refusal = next(r for r in rows if (r.level, r.subset) == ("64", "refusal"))
        assert (refusal.p_value, refusal.p_method, refusal.p_mc_se, refusal.n_videos) == (expected, "exact", 0.0, 12)
        assert refusal.in_family and refusal.holds and not refusal.near_alpha
        # no answerable item: no non_refusal row; overall is the refusal subset, and level "all" repeats 64
        assert {r.subset for r in rows} == {"overall", "refusal"} and all(r.p_value == expected for r in rows)


def test_a_sampled_arm_is_compared_on_its_per_item_means():
    """An arm with three runs per item (`sample` 0..2) against one run once: each item's correctness is the mean over
    its runs, so accuracy_a is the mean of the runs' accuracies and the difference that of the per-item means."""
    import dataclasses

    runs = {0: [True, False, True, False], 1: [True, True, False, False], 2: [False, False, True, False]}
    videos = ["v1", "v2", "v3", "v4"]
    sampled = [
        dataclasses.replace(_judgment(f"i{at}", videos[at], 64, "s", "honest", right), sample=k)
        for k, of_run in runs.items()
        for at, right in enumerate(of_run)
    ]
    once = [_judgment(f"i{at}", videos[at], 64, "o", "honest", at == 0) for at in range(4)]
    rows, notes = compare(sampled + once, [("config", Arm("s", "honest"), Arm("o", "honest"))], "rules", SETTINGS)
    assert not notes
    (row,) = [r for r in rows if (r.level, r.subset) == ("64", "overall")]
    means = [np.mean([runs[k][at] for k in runs]) for at in range(4)]  # 2/3, 1/3, 2/3, 0
    assert row.n == 4 and row.accuracy_a == round(100 * float(np.mean(means)), 4) and row.accuracy_b == 25.0
    assert row.difference == pytest.approx(100 * (float(np.mean(means)) - 0.25), abs=1e-3)
    assert row.p_method == "exact" and row.p_value is not None
