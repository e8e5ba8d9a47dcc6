from virtuebench import REFUSAL_ANSWER
from virtuebench.instances import Instance
from virtuebench.metrics import Score
from virtuebench.report.figures import unanswerability
from virtuebench.report.tables import latex_escape, table1, table2


def _score(model, level, subset, accuracy, prompt="honest"):
    return Score(model, prompt, str(level), subset, accuracy, 1, 2, 0, "rules")


def test_table2_marks_levels_a_model_did_not_run():
    scores = [_score("a_model", 64, s, v) for s, v in [("overall", 50.0), ("non_refusal", 25.0), ("refusal", 75.0)]]
    scores += [_score("other", level, s, 10.0) for level in (64, 128) for s in ("overall", "non_refusal", "refusal")]
    text = table2(scores, ["a_model", "other"], [64, 128], "honest", "rules")
    assert r"a\_model & 50.00 & 25.00 & 75.00 & - & - & - \\" in text
    assert r"other & 10.00 & 10.00 & 10.00 & 10.00 & 10.00 & 10.00 \\" in text
    assert text.count(r"\multicolumn{3}{c}") == 2


def test_table1_perception_reasoning_cells():
    scores = [_score("m", 64, "overall", 40.0), _score("m", 64, "perception", 50.0), _score("m", 64, "reasoning", 30.0)]
    scores.append(_score("m", 64, "overall", 99.0, prompt="plain"))  # another prompt: not in this table
    text = table1(scores, ["m"], [64, 128], "honest", "rules")
    assert r"m & 40.00 & 50.00 / 30.00 & - & - \\" in text


def test_latex_escape():
    assert latex_escape("Qwen2.5-VL_7B & 100%") == r"Qwen2.5-VL\_7B \& 100\%"


def test_unanswerability_counts():
    def inst(i, answers):
        return Instance(f"i{i}", "v", "s", "perception", "t", "q?", "a", 2000.0, "v.mp4", answers)

    instances = [
        inst(1, {64: REFUSAL_ANSWER, 128: "a"}),
        inst(2, {64: "a", 128: "a"}),
        inst(3, {64: REFUSAL_ANSWER}),
    ]
    by_level, by_instance = unanswerability(instances, [64, 128])
    assert [(r["level"], r["n_instances"], r["n_unanswerable"]) for r in by_level] == [(64, 3, 2), (128, 2, 0)]
    assert [(r["n_unanswerable_levels"], r["n_instances"]) for r in by_instance] == [(0, 1), (1, 1), (2, 0)]
