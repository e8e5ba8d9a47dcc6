"""docs/choices.md's switches and the dry-run case of each: the table's setting cells, read once
(tests/workflow/test_choices.py checks each names a setting that exists), and SWITCHES, what flipping each setting must
make Snakemake run on a finished results folder (tests/workflow/test_choices_dryrun.py and, for the curation and the
supplement, tests/curation/test_curation_workflow.py run the cases; issue 38: "each switch changes what runs").

A case is one of two kinds:
- rerun (the default): the folder of its family was finished with the defaults; the setting is flipped and the dry run
  must schedule exactly the rules in `due` (rule names, `all` aside), and ask exactly the `models` named for answers (run_inference's
  message; the supplement's inference is counted by its rule);
- commands (`differs` given): where the folder holds no finished job the setting reaches (a GPU model's inference, a
  download) or the setting is read only beside another (the sample's seed beside its size), the dry run is made twice, with `base`
  and with `base` plus the change: both schedule `due`, and the shell commands that differ are exactly those holding
  `differs`, each holding `shows` after the change. The setting then sits in a tracked param or the command, which a
  finished job would rerun on (Snakemake's params and code triggers).

A setting the table adds (a planned row once its work merges, e.g. `samples`) needs one entry here: its key as the
table writes it, its family, the change and the rules it must rerun; test_choices_dryrun.py fails, naming it, until
the entry exists."""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from helpers.data import REPO
from helpers.workflow import scheduled, snakemake
from virtuebench.report.paper import paper_models

CHOICES = REPO / "docs" / "choices.md"

#: What reads every judgment of every judge in the browser, and the agreement between the demo's two judges.
BROWSER = frozenset({"make_browser", "link_browser"})
#: The report: what rereads the scores (Tables 1 and 2, the figures drawn from scores.csv, the browser, which shows
#: scores.csv's intervals and trust scores, and comparisons.csv's) and the paired comparisons.
SCORES = frozenset({"compute_scores", "make_tables", "make_fig6", "make_fig_levels"}) | BROWSER
REPORT = SCORES | {"compare_arms"}
JUDGMENTS = BROWSER | {"judge_responses", "compare_judges"}
#: One model's answers changed: its inference, the judging of it by both judges, the report and the browser.
ONE_MODEL = REPORT | JUDGMENTS | {"run_inference"}
#: The curated benchmark's instances table changed: what is made from it (the report's tables, Fig. 4, the statistics
#: and the supplement's VirtueBench column; the rules judge's verdicts, keyed on the rows, are reused).
INSTANCES = frozenset({"make_instances", "compute_scores", "make_tables", "make_fig4", "make_stats", "make_supplement_table"})
DRAFTS = INSTANCES | {"draft_reference_answers", "export_annotation"}
SUPPLEMENT_ANSWERS = frozenset({"run_supplement_inference", "judge_supplement", "make_supplement_table"})

#: The vLLM registry entry whose settings are flipped for the rows of models this machine cannot run (Qwen3-VL: the
#: sampling settings; a Qwen or MiMo-VL entry: the token limit, the video budget, the hub id).
VLLM_MODEL = "Qwen3VL-8B"


@dataclass(frozen=True)
class Case:
    """What flipping one setting must run. `change` and `base` map a dotted workflow-config key ("report.trust.scheme")
    or "registry:<model>:<field>" ("registry:api:settings.temperature") to its value."""

    family: str  # "demo": test_choices_dryrun.py's finished run; "curated": test_curation_workflow.py's; "curation-empty"
    change: dict[str, Any]
    due: frozenset[str]
    models: frozenset[str] = frozenset()  # models whose inference must be scheduled (the dry run's "Asking <model>")
    differs: str = ""  # the commands kind: every shell command that differs holds this
    base: dict[str, Any] = field(default_factory=dict)  # the commands kind: set on both sides of the comparison
    shows: str = ""  # commands kind: ...and, after the change, this
    #: commands kind: the tables' command differs too, its captions naming the option (`model_choices`: "choice = option")
    caption: str = ""


def _demo_judge(**settings: Any) -> dict[str, Any]:
    return {"change": {f"judges.llm.{name}": value for name, value in settings.items()}, "due": JUDGMENTS}


def _on_added_model(model: str, change: dict[str, Any], shows: str, caption: str = "") -> Case:
    """`change`, with `model` added to the demo's models on both sides (it never ran here): only its command changes."""
    base = {"models": ["guess", "api", model]}
    # A model of the paper's Tables 1 and 2 puts results/paper_vs_run.csv among the targets (its numbers beside the paper's).
    due = ONE_MODEL | ({"make_paper_vs_run"} if model in paper_models() else set())
    return Case("demo", change, due, frozenset({model}), base=base, differs=f"--model {model} ", shows=shows, caption=caption)


def _on_vllm_model(setting: str, value: Any, shows: str) -> Case:
    """A registry field of the vLLM entry, added to the demo's models on both sides (it never ran here)."""
    return _on_added_model(VLLM_MODEL, {f"registry:{VLLM_MODEL}:{setting}": value}, shows)


def _model_choice(model: str, choice: str, option: str, shows: str) -> Case:
    """A named registry choice (config.model_choices) at another option, with a model that declares it added to the
    demo's models on both sides: only that model's command changes, to show the option's value."""
    return _on_added_model(model, {f"model_choices.{choice}": option}, shows, caption=f"{choice} = {option}")


SWITCHES: dict[str, Case] = {
    # --- Curation: test_curation_workflow.py's annotated run (LVBench and Video-MME, scripted filter models) ----------
    "curation.sources": Case(
        "curated", {"curation.sources": ["lvbench"]}, DRAFTS | {"collect_candidates", "merge_kept"}
    ),  # Video-MME's questions leave the pool: the kept questions are merged again, drafted and exported anew
    "curation.revisions": Case(
        "curation-empty",
        {"curation.revisions": {"lvbench": "0123456789abcdef0123456789abcdef01234567"}},
        frozenset({"download_source", "convert_source", "filter_answer_length"}),
        differs="-m virtuebench.sources.download lvbench ",
        shows="--revision 0123456789abcdef0123456789abcdef01234567",
    ),  # a release given by raw_dirs is not downloaded (the curated run's are), so the download's command is compared
    "curation.moviechat_breakpoint": Case(
        "curation-empty",
        {"curation.moviechat_breakpoint": "include"},
        frozenset({"download_source", "convert_source", "filter_answer_length"}),
        differs="-m virtuebench.sources moviechat-1k ",
        shows='"include_breakpoint": true',
    ),  # the curated run has no MovieChat-1K; its rerun on a converted folder: test_the_moviechat_breakpoint_switch_...
    "curation.max_answer_words": Case(
        "curated",
        {"curation.max_answer_words": 12},
        DRAFTS | {"filter_answer_length", "filter_answerability", "filter_difficulty", "merge_kept"},
    ),
    "curation.filter_model": Case(
        "curated", {"curation.filter_model": "Drafter"}, DRAFTS | {"filter_answerability", "filter_difficulty", "merge_kept"}
    ),
    "curation.filter_frame_max_side": Case("curated", {"curation.filter_frame_max_side": 64}, DRAFTS | {"filter_difficulty", "merge_kept"}),
    "curation.seed": Case("curated", {"curation.seed": 1}, DRAFTS | {"filter_difficulty", "merge_kept"}),
    "curation.difficulty_judge": Case(
        "curated",
        {"judges.strict": {"kind": "llm", "model": "a-judge", "api_key_env": None}, "curation.difficulty_judge": "strict"},
        DRAFTS | {"filter_difficulty", "merge_kept"},
    ),
    "curation.reference_model": Case("curated", {"curation.reference_model": "Filter"}, DRAFTS),
    # --- Evaluation: the demo's finished run (tests/workflow/test_choices_dryrun.py) ----------------------------------
    "levels": Case(
        "demo", {"levels": [64]}, REPORT | BROWSER | {"compare_judges", "make_fig4"}
    ),  # a level dropped: the report without it; the kept level's frames and answers stay (one frames job per level)
    "frames.max_pixels": Case("demo", {"frames.max_pixels": 1024}, ONE_MODEL | {"extract_frames"}, frozenset({"guess", "api"})),
    "prompts": Case("demo", {"prompts": ["honest"]}, REPORT | JUDGMENTS - {"judge_responses"}),  # plain's answers leave
    # the comparisons change with the report's prompt, and the browser shows them
    "report.prompt": Case("demo", {"report.prompt": "plain"}, REPORT - {"compute_scores"}),
    "report.trust.scheme": Case("demo", {"report.trust.scheme": "refusal-credit"}, SCORES),
    "report.trust.confidence_target": Case("demo", {"report.trust.confidence_target": 0.75}, SCORES),
    "report.intervals": Case("demo", {"report.intervals": True}, frozenset({"make_tables"})),
    # issue 50: scoring only; no answer is asked or judged again (the instances table, read by inference, is unchanged)
    "report.categories": Case("demo", {"report.categories": {"colour": "reasoning"}}, SCORES),
    "report.invalid": Case("demo", {"report.invalid": "drop"}, SCORES),
    "report.fig6_levels": Case("demo", {"report.fig6_levels": "common"}, frozenset({"make_fig6"})),
    # --- The supplement's Table 1: test_curation_workflow.py's annotated run (two models, four sources) --------------
    "supplement.mcq_prompt": Case("curated", {"supplement.mcq_prompt": "plain"}, SUPPLEMENT_ANSWERS),
    "supplement.oe_prompt": Case("curated", {"supplement.oe_prompt": "plain"}, SUPPLEMENT_ANSWERS),
    "supplement.question_pool": Case(
        "curated",
        {"supplement.question_pool": "filtered"},
        SUPPLEMENT_ANSWERS | {"filter_supplement_answer_length", "filter_supplement_answerability", "make_supplement_sets"},
    ),
    "supplement.short_video_frames": Case(
        "curated", {"supplement.short_video_frames": "cap"}, SUPPLEMENT_ANSWERS | {"extract_supplement_frames"}
    ),
    "supplement.longvideobench_subtitles": Case(
        "curated",
        {"supplement.longvideobench_subtitles": "interleaved"},
        SUPPLEMENT_ANSWERS | {"convert_supplement_source", "make_supplement_sets"},
    ),
    "supplement.mlvu_average": Case("curated", {"supplement.mlvu_average": "m-avg"}, frozenset({"make_supplement_table"})),
    "supplement.videoevalpro_grader": Case(
        "curated",
        {"supplement.videoevalpro_grader": "authors", "supplement.authors_grader_prompt": "config/grader_a.txt"},
        SUPPLEMENT_ANSWERS,
    ),  # judged again by the authors' grader, and asked again with their suffix (videoevalpro_suffix: null follows it)
    "supplement.authors_grader_prompt": Case(
        "curated",
        {"supplement.authors_grader_prompt": "config/grader_b.txt"},
        SUPPLEMENT_ANSWERS,
        base={"supplement.videoevalpro_grader": "authors", "supplement.authors_grader_prompt": "config/grader_a.txt"},
        differs="-m virtuebench.judge ",
        shows="prompt_sha256",
    ),  # read only beside videoevalpro_grader: authors (the run used the default grader): the grader's prompt differs
    "supplement.videoevalpro_suffix": Case("curated", {"supplement.videoevalpro_suffix": True}, SUPPLEMENT_ANSWERS),
    "supplement.max_questions_per_source": Case(
        "curated", {"supplement.max_questions_per_source": 1}, SUPPLEMENT_ANSWERS | {"make_supplement_sets"}
    ),
    "supplement.seed": Case(
        "curated",
        {"supplement.seed": 1},
        SUPPLEMENT_ANSWERS | {"make_supplement_sets"},
        base={"supplement.max_questions_per_source": 1},
        differs="supplement-sets ",
        shows="--seed 1 ",
    ),  # it draws the sample, so it is compared beside max_questions_per_source
    # --- Models and decoding: the demo's `api` (an OpenAI-compatible fake server) ran; the vLLM entry did not ---------
    "models.yaml: revision": Case(
        "demo", {"registry:guess:revision": "0123456789abcdef0123456789abcdef01234567"}, ONE_MODEL, frozenset({"guess"})
    ),
    "models.yaml: hub_id": _on_vllm_model("hub_id", "Qwen/Qwen3-VL-8B-Thinking", '"hub_id": "Qwen/Qwen3-VL-8B-Thinking"'),
    "models.yaml: settings.total_pixels": _on_vllm_model("settings.total_pixels", 19267584, '"total_pixels": 19267584'),
    "models.yaml: settings.max_new_tokens": _on_vllm_model("settings.max_new_tokens", 1024, '"max_new_tokens": 1024'),
    "models.yaml: settings.top_p": _on_vllm_model("settings.top_p", 0.95, '"top_p": 0.95'),
    "models.yaml: settings.top_k": _on_vllm_model("settings.top_k", 5, '"top_k": 5'),
    "models.yaml: settings.presence_penalty": _on_vllm_model("settings.presence_penalty", 0.0, '"presence_penalty": 0.0'),
    "models.yaml: settings.seed": _on_vllm_model("settings.seed", 1234, '"seed": 1234'),
    "models.yaml: samples": _on_vllm_model("samples", 3, '"samples": 3'),  # a sampled entry (temperature 0.7, a seed)
    "models.yaml: settings.temperature": Case("demo", {"registry:api:settings.temperature": 0.7}, ONE_MODEL, frozenset({"api"})),
    "models.yaml: settings.max_tokens": Case("demo", {"registry:api:settings.max_tokens": 32}, ONE_MODEL, frozenset({"api"})),
    "models.yaml: settings.max_completion_tokens": Case(
        "demo", {"registry:api:settings.max_completion_tokens": 128}, ONE_MODEL, frozenset({"api"})
    ),
    "models.yaml: settings.reasoning_effort": Case(
        "demo", {"registry:api:settings.reasoning_effort": "low"}, ONE_MODEL, frozenset({"api"})
    ),
    "models.yaml: settings.timestamps": Case("demo", {"registry:api:settings.timestamps": True}, ONE_MODEL, frozenset({"api"})),
    "models.yaml: settings.timestamp_format": Case(
        "demo", {"registry:api:settings.timestamp_format": "<{clock}>"}, ONE_MODEL, frozenset({"api"})
    ),
    "models.yaml: settings.model": Case("demo", {"registry:api:settings.model": "fake-vlm-2"}, ONE_MODEL, frozenset({"api"})),
    "models.yaml: settings.system_suffix": _on_added_model(
        "Keye-VL-8B", {"registry:Keye-VL-8B:settings.system_suffix": "/think"}, '"system_suffix": "/think"'
    ),
    "models.yaml: settings.generation": _on_added_model(
        "InternVL3.5-8B-RL", {"registry:InternVL3.5-8B-RL:settings.generation": {"do_sample": True}}, '"do_sample": true'
    ),
    # --- The named registry choices (config.model_choices): a model that declares each, added to the demo's --------
    "model_choices.mimo_vl_release: june-2025, august-2025": _model_choice(
        "Mimo-VL-7B", "mimo_vl_release", "august-2025", '"hub_id": "XiaomiMiMo/MiMo-VL-7B-SFT-2508"'
    ),
    "model_choices.mimo_vl_decoding: lmms-eval, examples": _model_choice(
        "Mimo-VL-7B", "mimo_vl_decoding", "examples", '"max_new_tokens": 16384'
    ),
    "model_choices.qwen3_vl_decoding: readme, videomme-script": _model_choice(
        "Qwen3VL-8B-Thinking", "qwen3_vl_decoding", "videomme-script", '"seed": 3407'
    ),  # the Thinking entry: for Instruct the script's values are the README's (no command changes)
    "model_choices.internvl35_stage: instruct, mpo": _model_choice(
        "InternVL3.5-8B", "internvl35_stage", "mpo", '"hub_id": "OpenGVLab/InternVL3_5-8B-MPO"'
    ),
    "model_choices.qwen_video_budget: videomme, qwen-vl-utils": _model_choice(
        VLLM_MODEL, "qwen_video_budget", "qwen-vl-utils", '"total_pixels": 117964800'
    ),
    "model_choices.internvl35_decoding: greedy, card": _model_choice(
        "InternVL3.5-8B-RL", "internvl35_decoding", "card", '"do_sample": true'
    ),
    "model_choices.api_time_labels: seconds, clock": _model_choice("GPT-4o", "api_time_labels", "clock", '"timestamp_format": "<{clock}>"'),
    "model_choices.gpt5_completion_tokens: project, reasoning-guide": _model_choice(
        "GPT-5", "gpt5_completion_tokens", "reasoning-guide", '"max_completion_tokens": 25000'
    ),
    # --- The judge: the demo reports `rules` and measures its agreement with `llm` (the fake server) -----------------
    "judge": Case("demo", {"judge": "llm"}, REPORT),  # llm judged every answer already: only the report is redone
    "judges": Case(
        "demo",
        {"judges.llm-2": {"kind": "llm", "model": "another-judge", "api_key_env": None}, "judge": "llm-2"},
        REPORT | BROWSER | {"judge_responses"},
    ),  # a judge defined anew and reported: its judgments, the report and the browser
    "judges: model": Case("demo", **_demo_judge(model="gpt-4o-2024-11-20")),
    "judges: prompt": Case("demo", **_demo_judge(prompt="cvrr")),
    "judges: max_tokens": Case("demo", **_demo_judge(max_tokens=32)),
    "judges: parse_retries": Case("demo", **_demo_judge(parse_retries=0)),
    # --- CVRR-ES (docs/choices.md, "CVRR-ES"): its switches on the demo's run ------------------------------------------
    "judges: temperature": Case("demo", **_demo_judge(temperature=None)),  # none sent: the CVRR-ES authors' judge
    "models.yaml: levels": Case(
        "demo", {"registry:guess:levels": [64]}, REPORT | BROWSER | {"compare_judges"}
    ),  # guess's 128-frame answers leave the report; nothing is asked (a CVRR-ES model's own frame count)
    "dscp_context": Case(
        "demo",
        {"dscp_context": "per-question"},
        ONE_MODEL,
        frozenset({"guess", "api"}),
        base={"prompts": ["honest", "plain", "dscp"], "dscp_context": "per-video"},
        differs="--prompt dscp ",
        shows="--prompt dscp --context-scope per-question ",
    ),  # DSCP added on both sides (it never ran here): only its inference commands differ, the others' are as before
    # The judge's open decisions (issue 50): judging only, never inference (`models` empty); `llm` is not reported
    "judges: forbidden_pairs": Case("demo", **_demo_judge(forbidden_pairs="trust-refusal")),
    "judges: reasoning": Case("demo", **_demo_judge(reasoning="answer-only")),
    "judges: truncated": Case("demo", **_demo_judge(truncated="judge")),
}


def table_settings() -> dict[str, list[str]]:
    """Each setting docs/choices.md names (in backticks in a row's setting cell), with the rows (their first cell)
    that name it; a planned row's and a fixed one's ('-') are left out, as they switch nothing yet."""
    settings: dict[str, list[str]] = {}
    for choice, cell in setting_cells():
        if "planned" in cell or cell.startswith("-"):
            continue
        for key in re.findall(r"`([^`]+)`", cell):
            settings.setdefault(key, []).append(choice)
    return settings


def setting_cells() -> list[tuple[str, str]]:
    """(the row's first cell, its setting cell) of every table row in docs/choices.md."""
    rows = []
    for line in CHOICES.read_text().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0] not in ("choice", "---"):
            rows.append((cells[0], cells[3]))
    return rows


def flipped(config: dict[str, Any], registry: dict[str, Any], change: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Copies of the workflow config and the model registry with `change` applied (Case.change's keys)."""
    config, registry = copy.deepcopy(config), copy.deepcopy(registry)
    for key, value in change.items():
        if key.startswith("registry:"):
            _, model, path = key.split(":", 2)
            assert model in registry, f"{key}: no model {model!r} in the registry (config/models.yaml renamed it?)"
            node, parts = registry[model], path.split(".")
        else:
            node, parts = config, key.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = copy.deepcopy(value)
    return config, registry


def shell_commands(result) -> Counter:
    """The shell commands a dry run with --printshellcmds lists (each job's, as many times as it appears)."""
    text = result.stdout + result.stderr
    return Counter(line.removeprefix("Shell command:").strip() for line in text.splitlines() if line.startswith("Shell command: python"))


#: Dry runs already made, by folder, config, registry and targets: a folder is left as its finished run made it.
_DRY_RUNS: dict[str, tuple[set[str], set[str], Counter]] = {}


def check_switch(setting: str, case: Case, workdir: Path, config: dict[str, Any], targets: Sequence[str] = ()) -> None:
    """Flip `setting` as `case` says on the folder `workdir` holds (its finished run made with `config`, whose
    model_registry is one file) and check what the dry run schedules: module docstring."""
    registry = yaml.safe_load(Path(config["model_registry"]).read_text())

    def dry_run(change: dict[str, Any]):
        changed, changed_registry = flipped(config, registry, change)
        (workdir / "models-flipped.yaml").write_text(yaml.safe_dump(changed_registry, sort_keys=False))
        changed["model_registry"] = str(workdir / "models-flipped.yaml")
        key = json.dumps([str(workdir), changed, changed_registry, list(targets)], sort_keys=True, default=str)
        if key not in _DRY_RUNS:  # the comparisons' bases repeat (seven settings of one vLLM entry share theirs)
            result = snakemake(workdir, "-n", "--printshellcmds", *targets, config=changed)
            jobs = scheduled(result)
            rules = {name for name in jobs if name != "all" and not name.startswith("model:")}
            asked = {name.removeprefix("model:") for name in jobs if name.startswith("model:")}
            _DRY_RUNS[key] = rules, asked, shell_commands(result)
        return _DRY_RUNS[key]

    rules, asked, commands = dry_run({**case.base, **case.change})
    print(f"\n{setting}: {sorted(rules)}, inference of {sorted(asked)}")
    where = f"docs/choices.md's {setting!r} flipped ({case.change})"
    assert rules == case.due, f"{where}: scheduled {sorted(rules)}, expected {sorted(case.due)} (tests/helpers/choices.py)"
    assert asked == case.models, f"{where}: asked {sorted(asked)} for answers, expected {sorted(case.models)}"
    if not case.differs:
        return
    base_rules, base_asked, base_commands = dry_run(case.base)
    assert (base_rules, base_asked) == (rules, asked), f"{where}: the comparison's base schedules other jobs: {sorted(base_rules)}"
    before, after = base_commands - commands, commands - base_commands
    if case.caption:  # the tables' captions state the option: their command is the one other that changes
        tables = [command for command in after if "-m virtuebench.report tables " in command]
        assert len(tables) == 1 and case.caption in tables[0], f"{where}: the tables' command does not name {case.caption!r}: {tables}"
        before = Counter({command: n for command, n in before.items() if "-m virtuebench.report tables " not in command})
        after = Counter({command: n for command, n in after.items() if command not in tables})
    assert after, f"{where}: no shell command changed"
    assert all(case.differs in command for command in before + after), f"{where}: commands without {case.differs!r} changed: {list(after)}"
    assert all(case.shows in command for command in after), f"{where}: a changed command lacks {case.shows!r}: {list(after)}"
    assert sum(before.values()) == sum(after.values()), f"{where}: {list(before)} became {list(after)}"
