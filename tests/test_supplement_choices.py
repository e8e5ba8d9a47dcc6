"""The supplement's protocol choices (docs/supplement.md): each is a config setting, used, and named in Table 1's caption."""

from __future__ import annotations

import copy
import json

import pytest
import yaml
from helpers.data import REPO

from virtuebench.config import ConfigError, check_config
from virtuebench.curation.supplement import Choices, accuracy, write_table


def _judgments(path, verdicts):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"task_type": task, "valid": True, "judgement": right}) + "\n" for task, right in verdicts))
    return path


def test_mlvu_is_pooled_or_the_mean_of_its_task_accuracies(tmp_path):
    # task A: 3 of 4 right; task B: 0 of 1 right. Pooled: 3/5 = 60%. M-Avg: (75% + 0%) / 2 = 37.5%.
    path = _judgments(tmp_path / "j.jsonl", [("A", 1), ("A", 1), ("A", 1), ("A", 0), ("B", 0)])
    assert accuracy(path) == (60.0, 3, 5)
    assert accuracy(path, by_task=True) == (37.5, 3, 5)


@pytest.mark.parametrize("choices", [Choices(), Choices("plain", "honest", "m-avg")])
def test_table_1_uses_and_states_every_choice(tmp_path, choices):
    mlvu = [("A", 1), ("A", 1), ("A", 1), ("A", 0), ("B", 0)]
    judgments = {("m", "mlvu", form): _judgments(tmp_path / "mlvu" / f"{form}.jsonl", mlvu) for form in ("mcq", "oe")}
    write_table(judgments, {"m": 50.0}, ["m"], ["mlvu"], 64, tmp_path / "t.csv", tmp_path / "t.tex", choices)
    tex = (tmp_path / "t.tex").read_text()
    expected = "37.50" if choices.mlvu_average == "m-avg" else "60.00"
    assert f"m & {expected} & {expected} & 50.00" in tex
    assert rf"MCQ with the \texttt{{{choices.mcq_prompt}}} prompt" in tex and rf"OE with the \texttt{{{choices.oe_prompt}}} prompt" in tex
    assert ("M-Avg" in tex) == (choices.mlvu_average == "m-avg") and "not with its authors' grader" in tex
    assert "not a filtered pool" in tex and "less than 1 s apart" in tex


def test_the_choices_are_config_settings_with_named_values():
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config = {**copy.deepcopy(config), "supplement": {"mcq_prompt": "sneaky"}}
    with pytest.raises(ConfigError, match="config.supplement.mcq_prompt: 'sneaky' is not allowed; allowed values"):
        check_config(config, REPO / "config", environ={})
    config["supplement"] = {"mlvu_average": "median"}
    with pytest.raises(ConfigError, match="config.supplement.mlvu_average"):
        check_config(config, REPO / "config", environ={})
    schema = yaml.safe_load((REPO / "config" / "schema.yaml").read_text())["properties"]["supplement"]["properties"]
    defaults = Choices()
    assert (schema["mcq_prompt"]["default"], schema["oe_prompt"]["default"], schema["mlvu_average"]["default"]) == (
        defaults.mcq_prompt,
        defaults.oe_prompt,
        defaults.mlvu_average,
    )


def test_questions_lost_to_missing_videos_are_counted_per_source_in_the_caption(tmp_path):
    from virtuebench.curation.supplement import missing_videos

    excluded = tmp_path / "lvbench" / "excluded.csv"
    excluded.parent.mkdir()
    excluded.write_text(
        "item,reason\n"
        "lvbench:q1,/raw/lvbench/videos/gone.mp4: video file not found\n"
        "lvbench:q2,/raw/lvbench/videos/gone.mp4: video file not found\n"
        "lvbench:q3,bad row: empty question or answer\n"
    )
    missing = missing_videos({"lvbench": excluded})
    assert missing == {"lvbench": 2}
    judgments = {("m", "lvbench", form): _judgments(tmp_path / "j" / f"{form}.jsonl", [("A", 1)]) for form in ("mcq", "oe")}
    write_table(judgments, {}, ["m"], ["lvbench"], 64, tmp_path / "t.csv", tmp_path / "t.tex", Choices(), missing)
    assert "Questions left out because their video is missing: LVBench 2." in (tmp_path / "t.tex").read_text()
