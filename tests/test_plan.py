"""The workflow's plan (virtuebench.plan), without Snakemake: built from the checked demo, CVRR-ES and paper configs as
the Snakefile builds it, it names the targets, frame options, resources, levels and judges the rules ask for."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from helpers.data import REPO

from virtuebench.config import check_config, with_defaults
from virtuebench.curation.supplement import AUTHORS_GRADER_JUDGE
from virtuebench.instances import Instance
from virtuebench.judge.spec import JudgeSpec
from virtuebench.plan import CPUS_PER_GPU, Plan, levels_present


def config_of(name: str) -> dict:
    return copy.deepcopy(yaml.safe_load((REPO / "config" / name).read_text()))


def plan_of(config: dict) -> Plan:
    """The plan the Snakefile builds: the config checked, then with the schema's defaults filled in (validate())."""
    checked = check_config(config, REPO / "config", base_dir=REPO, defer_keys=True, environ={})
    return Plan.build(with_defaults(config, REPO / "config" / "schema.yaml"), checked, REPO / "config")


def instance(video_id: str, levels: list[int]) -> Instance:
    answers = {level: "a" for level in levels}
    return Instance(f"{video_id}-q", video_id, "synthetic", "c", "t", "?", "a", 10.0, f"{video_id}.mp4", answers)


def test_the_demo_plan_puts_everything_under_results_and_makes_virtuebench_tables():
    plan = plan_of(config_of("config.yaml"))
    assert (plan.results, plan.logs, plan.store, plan.judge_cache) == ("results", "logs", ".virtuebench/store", ".virtuebench/store")
    assert plan.curation_cache == ".virtuebench/store"
    assert plan.legacy_caches() == [
        ("results/judge_cache.sqlite", ".virtuebench/store"),
        ("results/curation/llm_cache.sqlite", ".virtuebench/store"),
    ]
    assert plan.default_targets() == [
        f"results/{name}"
        for name in [
            "table1.tex",
            "table2.tex",
            "fig4.png",
            "fig6.png",
            "scores.csv",
            "comparisons.csv",
            "table2_trust.tex",
            "fig_levels.png",
            "browser/index.html",
            "fig3_composition.png",
            "supplement/fig1_sources.png",
        ]
    ]
    assert not plan.curated and plan.curation_sources == [] and plan.supplement_sources == []
    assert plan.agreement_targets() == []


def test_a_cvrr_plan_makes_cvrr_tables_and_its_browser_in_its_own_folder():
    plan = plan_of(config_of("cvrr.yaml"))
    assert (plan.results, plan.logs) == ("results/cvrr", "logs/cvrr")
    tables = ["table2.tex", "table3.tex", "fig1.png", "fig4_dscp_gains.png", "browser/index.html"]  # its registration's
    assert plan.default_targets() == [f"results/cvrr/{name}" for name in tables]
    assert plan.frames_options() == "--levels 8 --jpeg-quality 90 --max-pixels 200704 --on-error record --sampling clip"


def test_dscp_context_reaches_only_the_two_step_prompts_inference():
    """config.dscp_context: per-question (the default, the CVRR-ES authors' way) adds its option to the two-step
    prompts' --prompt param only; per-video leaves every param as it was before the setting existed."""
    config = config_of("cvrr.yaml")
    plan = plan_of(config)
    assert plan.config["dscp_context"] == "per-question"
    arguments = {prompt: plan.prompt_argument(prompt) for prompt in plan.config["prompts"]}
    assert arguments == {"standard": "standard", "cot": "cot", "dscp_step1": "dscp_step1", "dscp": "dscp --context-scope per-question"}
    config["dscp_context"] = "per-video"
    assert {prompt: plan_of(config).prompt_argument(prompt) for prompt in config["prompts"]} == {p: p for p in config["prompts"]}


def test_the_paper_plan_adds_the_curation_and_supplement_targets():
    plan = plan_of(config_of("paper.yaml"))
    targets = plan.default_targets()
    assert targets[-3:] == [
        "results/paper/stats/sources.tex",
        "results/paper/curation/filter_counts.csv",
        "results/paper/supplement/table1.tex",
    ]
    assert plan.curation_sources == ["mlvu", "lvbench", "longvideobench", "moviechat-1k", "video-mme", "allvb"]
    assert plan.supplement_sources == ["mlvu", "lvbench", "longvideobench", "videoeval-pro"]
    # VideoEval-Pro is open-ended only; the other three have both forms.
    judgments = plan.supplement_judgments()
    assert len(judgments) == len(plan.supplement["models"]) * (3 * 2 + 1)
    assert "results/paper/supplement/judgments/Qwen2.5VL-7B/videoeval-pro/oe.jsonl" in judgments
    assert "results/paper/supplement/judgments/Qwen2.5VL-7B/videoeval-pro/mcq.jsonl" not in judgments
    config = config_of("paper.yaml")
    config["supplement"]["models"] = []
    assert plan_of(config).default_targets()[-1] == "results/paper/curation/filter_counts.csv"


def test_frame_options_follow_the_frames_settings_and_the_supplement_rule():
    config = config_of("config.yaml")
    config["frames"] = {**config.get("frames", {}), "max_side": 480, "max_pixels": None, "on_broken_video": "fail"}
    plan = plan_of(config)
    assert plan.frames_options() == "--levels 64 128 256 512 1024 --jpeg-quality 90 --max-side 480 --on-error fail"
    assert plan.supplement_frames_options() == "--levels 64 --jpeg-quality 90 --max-side 480 --on-error fail --sampling clip"
    config["supplement"] = {"short_video_frames": "cap"}
    assert plan_of(config).supplement_frames_options().endswith("--sampling clip-capped")


def test_model_levels_are_the_configured_ones_some_instance_has_within_max_level():
    config = config_of("paper.yaml")
    plan = plan_of(config)
    capped = next(name for name, entry in plan.checked.models.items() if entry.get("max_level") == 256)
    present = levels_present([instance("a", [64, 128]), instance("b", [256, 512])])
    assert present == {64, 128, 256, 512}
    assert plan.model_levels(capped, present) == [64, 128, 256]
    uncapped = next(name for name, entry in plan.checked.models.items() if entry.get("max_level", 1024) >= 512)
    assert plan.model_levels(uncapped, present) == [64, 128, 256, 512]
    assert plan.model_levels(uncapped, set()) == []
    demo = plan_of(config_of("config.yaml"))
    assert demo.judgments(None, {64}) == [
        f"results/judgments/rules/{model}/{prompt}/64.jsonl" for model in demo.config["models"] for prompt in demo.config["prompts"]
    ]
    assert demo.judgments("other", {64})[0].startswith("results/judgments/other/")


def test_resources_come_from_the_registry_entry_with_8_cpus_per_gpu_by_default():
    plan = plan_of(config_of("paper.yaml"))
    assert (plan.gpus("Qwen2.5VL-7B"), plan.cpus_per_gpu("Qwen2.5VL-7B")) == (1, CPUS_PER_GPU) and CPUS_PER_GPU == 8
    assert (plan.mem_mb("Qwen2.5VL-7B"), plan.runtime("Qwen2.5VL-7B")) == (80 * 1024, 480)
    assert plan.gpu_partition("Qwen2.5VL-7B", {"VB_SLURM_GPU_PARTITION": "gpu"}) == "gpu"
    # An API model asks for no GPU and so for no CPU per GPU, whatever the partition.
    assert (plan.gpus("GPT-4o"), plan.cpus_per_gpu("GPT-4o"), plan.mem_mb("GPT-4o"), plan.runtime("GPT-4o")) == (0, 0, 4096, 60)
    assert plan.gpu_partition("GPT-4o", {"VB_SLURM_GPU_PARTITION": "gpu"}) == ""
    # A curation model (the filter model) is looked up too.
    assert plan.model_entry(plan.config["curation"]["filter_model"]) == plan.checked.curation_models["Gemini-2.5-Flash"]


def test_an_entry_sets_its_own_cpus_per_gpu(tmp_path: Path):
    registry = yaml.safe_load((REPO / "config" / "models.yaml").read_text())
    registry["Qwen2.5VL-7B"]["cpus_per_gpu"] = 4
    (tmp_path / "models.yaml").write_text(yaml.safe_dump(registry))
    config = config_of("paper.yaml")
    config["model_registry"] = str(tmp_path / "models.yaml")
    plan = plan_of(config)
    assert plan.cpus_per_gpu("Qwen2.5VL-7B") == 4 and plan.cpus_per_gpu("Qwen3VL-8B") == CPUS_PER_GPU


def test_the_supplement_judge_is_mcq_the_runs_judge_or_the_authors_grader(tmp_path: Path):
    plan = plan_of(config_of("paper.yaml"))
    assert plan.supplement_judge("mlvu", "mcq") == JudgeSpec.resolve("mcq", {"kind": "mcq"})
    assert plan.supplement_judge("videoeval-pro", "oe") is plan.checked.judge_specs[plan.judge]  # resolved by the config check
    assert plan.supplement_choices.prompt_of("videoeval-pro", "oe") == "honest"
    config = config_of("paper.yaml")
    grader = tmp_path / "grader.txt"
    grader.write_text("Question: {question}\nTarget to match: {target}\nReply to grade: {predicted_answer}\n")
    config["supplement"] |= {"videoevalpro_grader": "authors", "authors_grader_prompt": str(grader)}
    plan = plan_of(config)
    grader = plan.supplement_judge("videoeval-pro", "oe")
    assert grader.name == AUTHORS_GRADER_JUDGE and grader.kind == "letter-grade" and len(grader.answers["prompt_sha256"]) == 64
    assert plan.supplement_judge("lvbench", "oe").name == plan.judge  # only VideoEval-Pro's grader is the authors'
    assert plan.supplement_choices.uses_suffix


def test_a_judge_not_in_use_is_looked_up_in_config_judges_else_is_rules():
    plan = plan_of(config_of("config.yaml"))
    assert plan.judge_settings("no-such-judge") == {"kind": "rules"}
    assert plan.judge_config(plan.judge_spec("no-such-judge")) != plan.judge_config(JudgeSpec.resolve("mcq", {"kind": "mcq"}))


@pytest.mark.parametrize("name", ["config.yaml", "paper.yaml"])
def test_the_instances_table_is_made_by_the_source_or_imported_from_the_annotations(name):
    plan = plan_of(config_of(name))
    step = plan.instances_step()
    if name == "config.yaml":
        assert step.inputs == {} and step.files == {} and step.folders == {"videos": "results/videos"} and step.threads == 2
        assert step.params["source"] == "synthetic" and "python -m virtuebench.sources " in step.command
    else:
        assert set(step.inputs) == {"kept", "merged", "drafts", "batches", "verified"} and step.folders == {}
        assert step.files == {"check": "results/paper/annotation/answerability_check.csv"} and step.threads == 1
        assert step.inputs["drafts"] == plan.reference_drafts() and len(step.inputs["drafts"]) == len(plan.config["levels"])
        assert "python -m virtuebench.curation import " in step.command


def test_the_tables_state_the_named_choices_of_their_models_and_only_theirs():
    """config.model_choices reaches the captions through the plan: each choice the tables' models declare, at the
    option in effect; a run whose models declare none (the demo) passes nothing, so its captions are as before."""
    assert plan_of(config_of("config.yaml")).choices_option(["refuse", "guess", "oracle"]) == ""
    config = {
        **config_of("config.yaml"),
        "models": ["refuse", "Mimo-VL-7B", "Qwen3VL-8B"],
        "model_choices": {"qwen_video_budget": "qwen-vl-utils"},
    }
    plan = plan_of(config)
    assert plan.choices_note(["refuse", "Mimo-VL-7B"]) == (
        "mimo_vl_release = june-2025 (default); mimo_vl_decoding = lmms-eval (default); qwen_video_budget = qwen-vl-utils"
    )
    assert plan.choices_note(["Qwen3VL-8B"]) == "qwen3_vl_decoding = readme (default); qwen_video_budget = qwen-vl-utils"
    assert plan.choices_option(["refuse"]) == ""
    assert plan.choices_option(["Qwen3VL-8B"]).startswith("--model-choices 'qwen3_vl_decoding = readme (default); ")


def test_the_tables_state_the_reported_judges_options():
    """The judge's open decisions (virtuebench.judge.inputs) reach the captions through the plan, at the values in
    effect: the demo's rules judge at its defaults, the paper's GPT-4o with forbidden_pairs too, a changed one as set."""
    assert plan_of(config_of("config.yaml")).judge_options("rules") == (
        "--judge-options 'reasoning = with-reasoning (default); truncated = no-answer (default)'"
    )
    config = config_of("paper.yaml")
    config["judges"]["gpt-4o"] = {**config["judges"]["gpt-4o"], "truncated": "judge", "forbidden_pairs": "trust-judgement"}
    assert plan_of(config).judge_options("gpt-4o") == (
        "--judge-options 'reasoning = with-reasoning (default); truncated = judge; forbidden_pairs = trust-judgement'"
    )
    rules = plan_of(config).judge_spec("rules")
    assert "reasoning" not in plan_of(config).judge_config(rules, responses=False)
    assert "with-reasoning" in plan_of(config).judge_config(rules)


def test_every_results_folder_the_plan_builds_is_listed_once():
    """Plan.res refuses a folder not in RESULTS_FOLDERS: the one list config.results is checked against."""
    from virtuebench.config import RESULTS_FOLDERS

    plan = plan_of(config_of("config.yaml"))
    assert plan.res("frames/syn01/64") == "results/frames/syn01/64" and plan.res("table1.tex") == "results/table1.tex"
    assert len(set(RESULTS_FOLDERS)) == len(RESULTS_FOLDERS)
    with pytest.raises(ValueError, match=r"plan: 'cache/x' is in a results folder not listed in virtuebench.config.RESULTS_FOLDERS"):
        plan.res("cache/x")


def timed(video_id: str, duration_s: float, levels: list[int]) -> Instance:
    return Instance(f"{video_id}-q", video_id, "synthetic", "c", "t", "?", "a", duration_s, f"{video_id}.mp4", dict.fromkeys(levels, "a"))


def test_a_level_or_model_without_an_item_is_named_with_why():
    """An empty result is an error (issue 48): each configured level no item is at says why (longer than every video,
    at 1 frame per second, or not a level the source built), each configured model whose max_level leaves it no level
    is named, and an empty table names the source."""
    config = {**config_of("config.yaml"), "levels": [64, 100, 128, 2048], "models": ["refuse", "LLaVA-Video-7B"]}
    plan = plan_of(config)
    table = [timed("a", 300.5, [64, 128, 256]), timed("b", 1076.4, [64, 128, 256, 512, 1024])]
    assert plan.empty_results(table) == [
        "config.levels[1]: level 100: no item is at this level (the source's items are at levels 64, 128, 256, 512, 1024)",
        "config.levels[3]: level 2048: longer than every video (longest 1,076 s; 2,048 frames at 1 per second need 2,048 s)",
    ]
    config["levels"] = [256, 512]  # LLaVA-Video-7B's max_level is 128: it would answer nothing
    assert plan_of(config).empty_results(table) == [
        "config.models[1]: model LLaVA-Video-7B: no item at its max_level 128 (model registry) or below; the levels that hold items: 256, 512"
    ]
    capped = plan_of(config)
    capped.checked.models["refuse"]["levels"] = [64]  # an entry's own levels (CVRR-ES: a frame count per model)
    assert capped.empty_results(table) == [
        "config.models[0]: model refuse: no item at its levels [64] (model registry); the levels that hold items: 256, 512",
        "config.models[1]: model LLaVA-Video-7B: no item at its max_level 128 (model registry) or below; the levels that hold items: 256, 512",
    ]
    capped.checked.models["LLaVA-Video-7B"]["levels"] = [256]
    assert capped.empty_results(table)[1] == (
        "config.models[1]: model LLaVA-Video-7B: no item at its levels [256] up to its max_level 128 (model registry); "
        "the levels that hold items: 256, 512"
    )
    assert capped.model_levels("refuse", {64, 256, 512}) == [] and capped.model_levels("LLaVA-Video-7B", {64, 128, 256}) == []
    config["levels"] = [64, 128]
    assert plan_of(config).empty_results(table) == []
    assert plan.empty_results([]) == ["config.source: source 'synthetic' yields no item"]


def test_a_level_beyond_every_clip_is_not_too_long_where_frames_sample_the_whole_clip():
    """CVRR-ES samples its level over the whole clip: a level is never longer than a video there."""
    plan = plan_of(config_of("cvrr.yaml"))
    assert plan.empty_results([timed("a", 5.2, [8])]) == []
    assert plan.empty_results([timed("a", 5.2, [16])]) == [
        "config.levels[0]: level 8: no item is at this level (the source's items are at levels 16)"
    ]


def test_the_demo_is_planned_from_its_settings_and_the_real_sources_are_not():
    """The synthetic demo's items are known before any job (its preview is what its adapter writes: tests/sources/
    test_synthetic.py); a real source's and the curated benchmark's only from their tables."""
    demo = plan_of(config_of("config.yaml"))
    preview = demo.preview()
    assert levels_present(preview) == {64, 128, 256, 512, 1024} and demo.empty_results(preview) == []
    assert max(inst.duration_s for inst in preview) // 1 == 1076
    assert plan_of(config_of("paper.yaml")).preview() is None


def test_the_report_options_the_rules_pass_on_are_the_configs():
    """rules/report.smk and rules/browser.smk read these from the plan: config.report's values, and the command-line
    options made from them (tests/workflow/test_rule_values.py: no rule file reads config[...])."""
    config = config_of("config.yaml")
    demo = plan_of(config)
    assert (demo.models, demo.prompts, demo.levels) == (config["models"], config["prompts"], config["levels"])
    assert (demo.report["prompt"], demo.report["invalid"]) == ("honest", "wrong")
    assert (demo.categories(), demo.compare_pairs_option(), demo.intervals_option()) == ("{}", "", "")
    assert demo.holm_tarone_option() == "--holm-tarone"
    assert demo.benchmark.name == "virtuebench" and demo.source_name == "synthetic"
    config["report"] |= {
        "categories": {"temporal grounding": "reasoning", "counting": "perception"},
        "compare": [["guess", "oracle"], ["oracle:plain", "guess:plain"]],
        "intervals": True,
        "holm_tarone": False,
    }
    changed = plan_of(config)
    assert changed.categories() == '{"counting": "perception", "temporal grounding": "reasoning"}'  # keys sorted
    assert changed.compare_pairs_option() == "--pair guess oracle --pair oracle:plain guess:plain"
    assert (changed.intervals_option(), changed.holm_tarone_option()) == ("--intervals", "--no-holm-tarone")
    assert changed.paper_names_option() == demo.paper_names_option() == ""  # the demo's models are not the paper's


def test_the_curation_and_supplement_options_the_rules_pass_on():
    config = config_of("paper.yaml")
    paper = plan_of(config)
    assert paper.difficulty_judge_config() == paper.judge_config(paper.judge_spec("gpt-4o"), responses=False)
    assert paper.difficulty_judge_run_config() == paper.judge_run_config(paper.judge_spec("gpt-4o"))
    assert paper.filter_frame_max_side() == 448  # the schema's default
    assert (paper.supplement_max_questions_option(), paper.supplement_seed()) == ("", 0)  # every question: no draw
    assert (paper.supplement_suffix(), paper.supplement_subtitles()) == ("no", "false")
    assert "--paper-name" in paper.paper_names_option()
    config["supplement"] |= {"max_questions_per_source": 50, "seed": 9, "longvideobench_subtitles": "interleaved"}
    config["curation"] |= {"filter_frame_max_side": None}
    sampled = plan_of(config)
    assert (sampled.supplement_max_questions_option(), sampled.supplement_seed()) == ("--max-questions 50", 9)
    assert (sampled.supplement_subtitles(), sampled.filter_frame_max_side()) == ("interleaved", "none")  # as decoded


def test_a_benchmarks_own_settings_come_from_the_plan():
    cvrr = plan_of(config_of("cvrr.yaml"))
    assert cvrr.benchmark.name == "cvrr" and cvrr.benchmark_settings() == cvrr.benchmark.settings_from(cvrr.config)
    with pytest.raises(ValueError, match="benchmark virtuebench has no settings of its own"):
        plan_of(config_of("config.yaml")).benchmark_settings()
