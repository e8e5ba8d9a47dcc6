"""The supplement's protocol choices (docs/supplement.md): each is a config setting, used, and named in Table 1's caption."""

from __future__ import annotations

import copy
import dataclasses
import json
import sys

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


@pytest.mark.parametrize(
    "choices",
    [
        Choices(),
        Choices("plain", "honest", "m-avg", "filtered", "cap"),
        Choices(videoevalpro_grader="authors"),
        Choices(videoevalpro_grader="authors", videoevalpro_suffix=False),
        Choices(videoevalpro_suffix=True),
    ],
)
def test_table_1_uses_and_states_every_choice(tmp_path, choices):
    mlvu = [("A", 1), ("A", 1), ("A", 1), ("A", 0), ("B", 0)]
    judgments = {("m", "mlvu", form): _judgments(tmp_path / "mlvu" / f"{form}.jsonl", mlvu) for form in ("mcq", "oe")}
    write_table(judgments, {"m": 50.0}, ["m"], ["mlvu"], 64, tmp_path / "t.csv", tmp_path / "t.tex", choices)
    tex = (tmp_path / "t.tex").read_text()
    expected = "37.50" if choices.mlvu_average == "m-avg" else "60.00"
    assert f"m & {expected} & {expected} & 50.00" in tex
    assert rf"MCQ with the \texttt{{{choices.mcq_prompt}}} prompt" in tex and rf"OE with the \texttt{{{choices.oe_prompt}}} prompt" in tex
    assert "M-Avg" in tex if choices.mlvu_average == "m-avg" else "M-Avg" not in tex
    authors = choices.videoevalpro_grader == "authors"
    assert ("not with its authors' grader" in tex) != authors and (
        "VideoEval-Pro: by its authors' grader, GPT-4o-2024-08-06" in tex
    ) == authors
    suffixed = choices.videoevalpro_suffix if choices.videoevalpro_suffix is not None else authors
    assert f"VideoEval-Pro's question {'with' if suffixed else 'without'} its authors' suffix ``Keep the answer short and concise.''" in tex
    assert "not implemented" not in tex
    assert ("not a filtered pool" in tex) == (choices.question_pool == "all")
    assert ("answer-length and Keep/Discard filters keep" in tex) == (choices.question_pool == "filtered")
    assert ("less than 1 s apart" in tex) == (choices.short_video_frames == "repeat")
    assert ("one per whole second" in tex) == (choices.short_video_frames == "cap")


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
    for name in Choices.__dataclass_fields__:
        assert schema[name]["default"] == getattr(defaults, name), name
    config["supplement"] = {"question_pool": "curated"}
    with pytest.raises(ConfigError, match="config.supplement.question_pool"):
        check_config(config, REPO / "config", environ={})
    config["supplement"] = {"short_video_frames": "stretch"}
    with pytest.raises(ConfigError, match="config.supplement.short_video_frames"):
        check_config(config, REPO / "config", environ={})


def test_the_filtered_pool_keeps_only_the_questions_the_curation_kept_in_both_forms():
    from virtuebench.curation.supplement import make_sets
    from virtuebench.instances import Instance

    def question(number):
        return Instance(
            instance_id=f"lvbench/{number}", video_id="v", source="lvbench", category="reasoning", task_type="t",
            question=f"Q{number}?", answer="red", duration_s=70.0, video_path="v.mp4", answers={64: "red"},
            options=["red", "blue"], source_id=str(number),
        )  # fmt: skip

    candidates = [question(n) for n in range(1, 6)]
    everything = make_sets(candidates)
    kept = make_sets(candidates, pool={"lvbench/2", "lvbench/4", "lvbench/9"})
    assert [i.instance_id for i in everything["oe"]] == [f"lvbench/{n}" for n in range(1, 6)]
    assert [i.instance_id for i in kept["oe"]] == [i.instance_id for i in kept["mcq"]] == ["lvbench/2", "lvbench/4"]


def _lvbench_release(raw, clip):
    """An LVBench release: 'kept' fetched, 'gone' no longer on YouTube (the fetch fails, videos_missing.csv says why),
    'deleted' fetched once and then lost (its file is just not there)."""
    import shutil

    from virtuebench.sources import lvbench

    def line(key, uids):
        qa = [{"uid": uid, "question": f"Q{uid}?\n(A) red\n(B) blue", "answer": "A", "question_type": ["reasoning"]} for uid in uids]
        return json.dumps({"key": key, "qa": qa})

    (raw / "videos").mkdir(parents=True)
    (raw / "video_info.meta.jsonl").write_text("\n".join([line("kept", [1]), line("gone", [2, 3]), line("deleted", [4])]) + "\n")
    shutil.copy(clip, raw / "videos" / "kept.mp4")
    shutil.copy(clip, raw / "videos" / "deleted.mp4")
    fail = f"{sys.executable} -c 'import sys; sys.exit(1)' {{out}} {{key}}"
    assert [row["key"] for row in lvbench.fetch_videos(raw, fail)] == ["gone"]
    (raw / "videos" / "deleted.mp4").unlink()
    return raw


def test_questions_lost_to_missing_videos_are_counted_per_source_in_the_caption_and_the_excluded_listing(tmp_path, video_factory):
    """The real LVBench adapter, through the sources CLI: questions 2 and 3 (video gone from YouTube, 'video not
    downloaded') and 4 (file not found) are missing_video rows of excluded.csv, and the caption counts them."""
    from helpers.data import convert_with_cli

    from virtuebench.curation.__main__ import main as curation_main
    from virtuebench.report.summary import summarize_excluded

    raw = _lvbench_release(tmp_path / "LVBench", video_factory(70, fps=1))
    (tmp_path / "lvbench").mkdir()
    instances, rows = convert_with_cli("lvbench", raw, tmp_path / "lvbench")
    assert [inst.source_id for inst in instances] == ["1"]
    kinds = {row["item"]: (row["source"], row["reason_kind"]) for row in rows}
    assert kinds == {f"lvbench:{uid}": ("lvbench", "missing_video") for uid in ("2", "3", "4")}
    reasons = {row["item"]: row["reason"] for row in rows}
    assert "video not downloaded" in reasons["lvbench:2"] and "video file not found" in reasons["lvbench:4"]
    excluded = tmp_path / "lvbench" / "excluded.csv"
    assert "questions lost to missing videos: lvbench 3" in summarize_excluded(excluded)

    judgments = tmp_path / "judgments" / "m" / "lvbench"
    paths = [str(_judgments(judgments / f"{form}.jsonl", [("reasoning", 1)])) for form in ("mcq", "oe")]
    tex = tmp_path / "t.tex"
    argv = ["supplement-table", "--judgments", *paths, "--prompt", "honest", "--level", "64", "--models", "m"]
    argv += ["--sources", "lvbench", "--csv", str(tmp_path / "t.csv"), "--tex", str(tex), "--mcq-prompt", "standard"]
    argv += ["--oe-prompt", "honest", "--mlvu-average", "pooled", "--question-pool", "all", "--short-video-frames", "repeat"]
    argv += ["--excluded", str(excluded)]
    assert curation_main(argv) == 0
    assert "Questions left out because their video is missing: LVBench 3." in tex.read_text()


def test_an_excluded_listing_without_reason_kinds_is_named(tmp_path):
    from virtuebench.curation.supplement import missing_videos

    old = tmp_path / "lvbench" / "excluded.csv"
    old.parent.mkdir()
    old.write_text("item,reason\nlvbench:q1,/raw/gone.mp4: video not downloaded (status 1)\n")
    with pytest.raises(ValueError, match=r"lvbench/excluded.csv: no reason_kind column"):
        missing_videos({"lvbench": old})


def test_videoevalpro_grader_and_suffix_choose_its_open_ended_judge_and_prompt_and_nothing_elses():
    """The authors' grader judges VideoEval-Pro's open-ended answers alone; their suffix goes on its open-ended prompt
    alone (by default wherever their grader is used), after the question."""
    from virtuebench.curation.supplement import AUTHORS_GRADER_JUDGE
    from virtuebench.prompts import get_prompt

    sources = ("mlvu", "lvbench", "longvideobench", "videoeval-pro")
    cells = [(source, form) for source in sources for form in ("oe", "mcq")]
    default, authors = Choices(), Choices(videoevalpro_grader="authors")
    assert {cell: default.judge_of(*cell) for cell in cells} == {cell: "mcq" if cell[1] == "mcq" else None for cell in cells}
    assert {cell for cell in cells if authors.judge_of(*cell) != default.judge_of(*cell)} == {("videoeval-pro", "oe")}
    assert authors.judge_of("videoeval-pro", "oe") == AUTHORS_GRADER_JUDGE
    assert {cell: default.prompt_of(*cell) for cell in cells} == {cell: "standard" if cell[1] == "mcq" else "honest" for cell in cells}
    for suffixed in (authors, Choices(videoevalpro_suffix=True), Choices(oe_prompt="standard", videoevalpro_suffix=True)):
        plain = dataclasses.replace(suffixed, videoevalpro_suffix=False)
        assert {cell for cell in cells if suffixed.prompt_of(*cell) != plain.prompt_of(*cell)} == {("videoeval-pro", "oe")}
        assert suffixed.prompt_of("videoeval-pro", "oe") == f"{suffixed.oe_prompt}+concise"
    assert Choices(videoevalpro_grader="authors", videoevalpro_suffix=False).prompt_of("videoeval-pro", "oe") == "honest"
    # The authors' open-ended question: theirs followed by one space and the suffix (their tools/*_chat.py).
    assert get_prompt("standard+concise").render("Who wins?") == "Who wins? Keep the answer short and concise."
    honest = get_prompt("honest").render("Who wins?")
    assert get_prompt("honest+concise").render("Who wins?") == honest + " Keep the answer short and concise."
    assert get_prompt("honest+concise").hash != get_prompt("honest").hash
    with pytest.raises(KeyError, match="unknown question suffix 'brief'"):
        get_prompt("honest+brief")


def _paper_config():
    return copy.deepcopy(yaml.safe_load((REPO / "config" / "paper.yaml").read_text()))


def test_the_authors_grader_needs_their_prompt_in_a_file_and_its_key(tmp_path):
    """videoevalpro_grader: authors stops before any job without a usable prompt file (naming where to copy it from),
    and asks for the grader's key where the table judges VideoEval-Pro."""
    config = _paper_config()
    where = "TIGER-AI-Lab/VideoEval-Pro, file tools/gpt4o_judge.py at commit 8467762b50689d718b7ea4f047cf20565ac0e2e2"
    config["supplement"]["videoevalpro_grader"] = "authors"
    with pytest.raises(ConfigError, match=r"config.supplement.authors_grader_prompt: required with videoevalpro_grader: authors"):
        check_config(config, REPO / "config", base_dir=REPO, defer_keys=True, environ={})
    config["supplement"]["authors_grader_prompt"] = str(tmp_path / "grader.txt")
    with pytest.raises(ConfigError, match=rf"config.supplement.authors_grader_prompt: file .*grader.txt not found; .* from {where}"):
        check_config(config, REPO / "config", base_dir=REPO, defer_keys=True, environ={})
    (tmp_path / "grader.txt").write_text("Question: {question}\nTarget to match: {target}\n")
    with pytest.raises(ConfigError, match=r"grader.txt lacks the placeholder\(s\) \{predicted_answer\}"):
        check_config(config, REPO / "config", base_dir=REPO, defer_keys=True, environ={})
    (tmp_path / "grader.txt").write_text("Question: {question}\nTarget to match: {target}\nReply to grade: {predicted_answer}\n")
    checked = check_config(config, REPO / "config", base_dir=REPO, defer_keys=True, environ={})
    grader_key = [line for line in checked.missing_keys if "videoevalpro_grader" in line]
    assert grader_key == [
        "config.supplement.videoevalpro_grader: the authors' grader needs an API key: set the environment variable OPENAI_API_KEY "
        "(or set config.supplement.videoevalpro_grader: virtuebench)"
    ]
    config["supplement"]["videoevalpro_grader"] = "theirs"
    with pytest.raises(
        ConfigError,
        match=r"config.supplement.videoevalpro_grader: 'theirs' is not allowed; did you mean 'authors'\? allowed values: virtuebench, authors",
    ):
        check_config(config, REPO / "config", base_dir=REPO, defer_keys=True, environ={})
    config["supplement"]["videoevalpro_grader"], config["supplement"]["videoevalpro_suffix"] = "virtuebench", "yes"
    with pytest.raises(ConfigError, match=r"config.supplement.videoevalpro_suffix: must be of type"):
        check_config(config, REPO / "config", base_dir=REPO, defer_keys=True, environ={})


def test_table_1_states_its_models_named_registry_choices(tmp_path):
    """config.model_choices in effect for the table's models (virtuebench.plan.Plan.choices_option), in the caption;
    none declared: the caption as before."""
    judgments = {("m", "mlvu", form): _judgments(tmp_path / "mlvu" / f"{form}.jsonl", [("A", 1)]) for form in ("mcq", "oe")}
    write_table(judgments, {"m": 50.0}, ["m"], ["mlvu"], 64, tmp_path / "t.csv", tmp_path / "plain.tex")
    write_table(
        judgments,
        {"m": 50.0},
        ["m"],
        ["mlvu"],
        64,
        tmp_path / "t.csv",
        tmp_path / "t.tex",
        model_choices="qwen_video_budget = videomme (default)",
    )
    plain, tex = (tmp_path / "plain.tex").read_text(), (tmp_path / "t.tex").read_text()
    assert "Model choices" not in plain
    assert tex == plain.replace("}\n\\end{table}", " Model choices: qwen\\_video\\_budget = videomme (default).}\n\\end{table}")
