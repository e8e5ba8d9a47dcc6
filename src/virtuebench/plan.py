"""The workflow's plan: one resolved configuration that answers every question the rules ask (where results and logs
go, the default targets, the levels a model runs at, the frame options, each job's resources, the judge of each table,
the supplement's choices). rules/common.smk builds it once from the checked configuration and only adapts
Snakemake's wildcards and checkpoints to it, so the policy is plain Python that tests read without Snakemake."""

from __future__ import annotations

import json
import math
import os
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from virtuebench.benchmarks import Benchmark, benchmark
from virtuebench.comparisons import METHOD as COMPARISONS_METHOD
from virtuebench.config import RESULTS_FOLDERS, Checked, logs_folder
from virtuebench.curation.supplement import AUTHORS_GRADER_JUDGE, Choices
from virtuebench.curation.supplement import forms_of as supplement_forms
from virtuebench.instances import Instance
from virtuebench.judge.letter_grade import grader_settings
from virtuebench.judge.spec import JudgeSpec
from virtuebench.levels import is_available
from virtuebench.metrics import METHOD as SCORES_METHOD
from virtuebench.report.paper import PAPER_PROMPT, paper_rows_of
from virtuebench.sources import preview_of, sampling_of

#: CPUs a GPU job asks per GPU where its registry entry gives no `cpus_per_gpu` (config/models.schema.yaml):
#: frame decoding and the data loader's workers beside the GPU (docs/cluster.md).
CPUS_PER_GPU = 8

#: Rules whose outputs are made from the judgments (directly or through results/scores.csv or the browser): what the
#: start-up sweep checks against the judgments it reads (rules/common.smk, guard_run; docs/reliability.md). A benchmark's
#: rules file adds its own (rules/cvrr.smk).
REPORT_RULES = (
    "compute_scores",
    "compare_arms",
    "make_tables",
    "make_fig6",
    "make_fig_levels",
    "make_browser",
    "link_browser",
    "make_supplement_table",
    "make_paper_vs_run",
)


def levels_present(table: Iterable[Instance]) -> set[int]:
    """The levels some instance of `table` has an answer at."""
    return {level for inst in table for level in inst.answers}


class EmptyResult(ValueError):
    """The configured source, a configured level or a configured model yields no item: an empty result is an error,
    and the run stops (rules/common.smk: before any job where the source's settings tell the items, else once the
    instances table is read)."""

    def __init__(self, problems: Sequence[str], items: str):
        """`items`: where the items checked come from (the instances table, or the source's plan of it)."""
        self.problems = list(problems)
        super().__init__(f"an empty result is an error; in the items of {items}:\n  " + "\n  ".join(self.problems))


@dataclass(frozen=True)
class InstancesStep:
    """How the instances table is made (rule make_instances, rules/sources.smk): by the source's adapter, or (source
    virtuebench) by importing the verified annotations of the curated questions. One rule, these parts by source."""

    inputs: dict[str, Any]  # name -> path or list of paths
    files: dict[str, str]  # outputs beside instances and excluded: files
    folders: dict[str, str]  # and folders
    params: dict[str, Any]
    threads: int
    message: str
    command: str


@dataclass(frozen=True)
class Plan:
    """The resolved configuration of one run. Built once (Plan.build); every method is a pure function of it."""

    config: Mapping[str, Any]  # validated, with the schema's defaults filled in
    checked: Checked
    config_dir: Path  # the schemas beside the Snakefile (each setting's rerun class)
    results: str
    logs: str
    store: str  # the answer and verdict store (support/store.py), shared by every results folder that names it
    judge_cache: str
    curation_cache: str
    supplement_choices: Choices
    supplement_grader: JudgeSpec | None  # the authors' grader, where VideoEval-Pro is judged by it

    @classmethod
    def build(cls, config: Mapping[str, Any], checked: Checked, config_dir: str | Path) -> Plan:
        """The plan of `config` (validated, defaults filled in) and what check_config resolved from it. Reads the
        authors' grader prompt where the supplement uses it: its sha256 is a tracked setting of those judge jobs."""
        # Every path is built from the results folder, so two configurations with different results folders (the
        # demo, CVRR-ES, a paper run) never touch each other's files.
        results = os.path.normpath(config["results"])
        supplement = config["supplement"]
        grader = supplement["videoevalpro_grader"] == "authors"
        return cls(
            config=config,
            checked=checked,
            config_dir=Path(config_dir),
            results=results,
            logs=logs_folder(results),
            store=os.path.normpath(config["store"]),
            judge_cache=config["judge_cache"] or os.path.normpath(config["store"]),
            curation_cache=config["curation"]["cache"] or os.path.normpath(config["store"]),
            supplement_choices=Choices(**{name: supplement[name] for name in Choices.__dataclass_fields__}),
            supplement_grader=JudgeSpec.resolve(AUTHORS_GRADER_JUDGE, grader_settings(supplement["authors_grader_prompt"]))
            if grader
            else None,
        )

    # -----------------------------------------------------------------------------------------
    # Folders and what the configuration runs

    def legacy_caches(self) -> list[tuple[str, str]]:
        """(SQLite cache of an older version, the store root its verdicts go to): the old default places, where the
        configuration leaves the caches to the store. The run's start reads them into the store once (judge/cache.py)."""
        pairs = [(self.res("judge_cache.sqlite"), self.judge_cache), (self.res("curation/llm_cache.sqlite"), self.curation_cache)]
        return [(legacy, root) for legacy, root in pairs if root == self.store]

    def res(self, path: str) -> str:
        """A path under the results folder (wildcards kept); a folder in it is one of RESULTS_FOLDERS."""
        head, sep, _ = path.partition("/")
        if sep and head not in RESULTS_FOLDERS:
            raise ValueError(f"plan: {path!r} is in a results folder not listed in virtuebench.config.RESULTS_FOLDERS: add {head!r} there")
        return f"{self.results}/{path}"

    def logpath(self, path: str) -> str:
        """A path under the logs folder (wildcards kept)."""
        return f"{self.logs}/{path}"

    @property
    def judge(self) -> str:
        """The judge the tables report (after any key fallback)."""
        return self.checked.judge

    @property
    def source_name(self) -> str:
        """config.source.name: the source adapter that builds the instances table (virtuebench.sources)."""
        return self.config["source"]["name"]

    @property
    def curated(self) -> bool:
        """Source virtuebench: the benchmark is curated from the real sources (rules/curation.smk)."""
        return self.source_name == "virtuebench"

    @property
    def curation_sources(self) -> list[str]:
        return list(self.config["curation"]["sources"]) if self.curated else []

    @property
    def benchmark(self) -> Benchmark:
        """The benchmark whose tables the default target builds: its rules file, targets and settings."""
        return benchmark(self.config["benchmark"])

    def benchmark_settings(self) -> Any:
        """The benchmark's own config block (config.<name>) as its settings dataclass, defaults filled in."""
        return self.benchmark.settings_from(dict(self.config))

    @property
    def models(self) -> list[str]:
        """config.models: the models the tables report."""
        return self.config["models"]

    @property
    def prompts(self) -> list[str]:
        return self.config["prompts"]

    @property
    def levels(self) -> list[int]:
        """config.levels: the frame levels, smallest first as configured."""
        return self.config["levels"]

    @property
    def curation(self) -> Mapping[str, Any]:
        """config.curation (source virtuebench: the filters, the reference model, the releases)."""
        return self.config["curation"]

    @property
    def annotation(self) -> Mapping[str, Any]:
        return self.config["annotation"]

    @property
    def supplement(self) -> Mapping[str, Any]:
        return self.config["supplement"]

    @property
    def supplement_sources(self) -> list[str]:
        """The supplement table's sources (the paper's four), converted beside the curation sources where it is made."""
        return list(self.supplement["sources"]) if self.curated and self.supplement["models"] else []

    def default_targets(self) -> list[str]:
        """What `snakemake` with no target makes: the benchmark's tables, figures and browser. A benchmark with tables of
        its own declares them (virtuebench.benchmarks: CVRR-ES's); VirtueBench's depend on the curation and supplement."""
        declared = self.benchmark.targets
        if declared is not None:
            return [self.res(name) for name in declared]
        names = ["table1.tex", "table2.tex", "fig4.png", "fig6.png", "scores.csv", "comparisons.csv", "table2_trust.tex"]
        names += ["fig_levels.png", "browser/index.html", "fig3_composition.png", "supplement/fig1_sources.png"]
        if self.paper_rows():
            names += ["paper_vs_run.csv", "paper_vs_run.tex"]
        if self.curated:
            names += ["stats/sources.tex", "curation/filter_counts.csv"]
            if self.supplement["models"]:
                names.append("supplement/table1.tex")
        return [self.res(name) for name in names]

    def paper_rows(self) -> dict[str, str]:
        """{run model: the row of the paper's Tables 1 and 2 it is shown beside} (results/paper_vs_run.csv): the models
        named as the paper names them, and those report.paper_names maps; none where the run lacks the paper's prompt."""
        if PAPER_PROMPT not in self.config["prompts"]:
            return {}
        return paper_rows_of(self.config["models"], self.config["report"].get("paper_names", {}))

    def agreement_targets(self) -> list[str]:
        """The agreement summary of every judge pair of config.compare_judges."""
        return [self.res(f"judge_agreement/{a}__vs__{b}.json") for a, b in self.checked.compare]

    # -----------------------------------------------------------------------------------------
    # Levels, frames and judgments

    def model_levels(self, model: str, present: set[int]) -> list[int]:
        """The levels a model runs at: configured, among its own `levels` where its entry lists them, within its
        max_level, and held by some instance (`present`)."""
        entry = self.checked.models[model]
        max_level, own = entry.get("max_level"), entry.get("levels")
        return [
            level
            for level in self.config["levels"]
            if level in present and (max_level is None or level <= max_level) and (own is None or level in own)
        ]

    def empty_results(self, table: Sequence[Instance]) -> list[str]:
        """Why the source, a configured level or a configured model yields no item of `table` (the instances table, or
        the source's preview of it), a line each naming the config key; [] where each yields some."""
        if not table:
            return [f"config.source: source {self.config['source']['name']!r} yields no item"]
        present = levels_present(table)
        problems = [
            f"config.levels[{index}]: level {level}: {self._why_no_item(level, table, present)}"
            for index, level in enumerate(self.config["levels"])
            if level not in present
        ]
        held = [level for level in self.config["levels"] if level in present]
        for index, model in enumerate(self.config["models"]):
            if held and not self.model_levels(model, present):
                entry = self.checked.models[model]
                own, max_level = entry.get("levels"), entry.get("max_level")
                if own is None:
                    limit = f"its max_level {max_level} (model registry) or below"
                else:
                    limit = (
                        f"its levels {own}" + (f" up to its max_level {max_level}" if max_level is not None else "") + " (model registry)"
                    )
                problems.append(
                    f"config.models[{index}]: model {model}: no item at {limit}; the levels that hold items: {', '.join(map(str, held))}"
                )
        return problems

    def _why_no_item(self, level: int, table: Sequence[Instance], present: set[int]) -> str:
        longest = max(inst.duration_s for inst in table)
        if sampling_of(self.config["source"]["name"]) == "1fps" and not is_available(level, longest):
            return f"longer than every video (longest {math.floor(longest):,} s; {level:,} frames at 1 per second need {level:,} s)"
        return f"no item is at this level (the source's items are at levels {', '.join(map(str, sorted(present)))})"

    def preview(self) -> list[Instance] | None:
        """The instances the source's table will hold, where its settings tell them before any job (the synthetic
        demo's); None where only the table will tell. Raises ValueError, naming the setting, for a source whose
        settings give no table (CVRR-ES: a folder without its annotation files)."""
        if self.curated:
            return None
        return preview_of(self.config["source"]["name"], self.config["source"]["settings"])

    def judgments(self, judge: str | None, present: set[int]) -> list[str]:
        """Every judgments file of a judge (the report's by default): each model, prompt and level it runs at."""
        return [
            self.res(f"judgments/{judge or self.judge}/{model}/{prompt}/{level}.jsonl")
            for model in self.config["models"]
            for prompt in self.config["prompts"]
            for level in self.model_levels(model, present)
        ]

    def reported_judges(self) -> list[str]:
        """The report judge, then every judge it is compared with (config.compare_judges), each once."""
        return list(dict.fromkeys([self.judge, *(name for pair in self.checked.compare for name in pair)]))

    def checked_judgments(self, table: Iterable[Instance]) -> list[str]:
        """The judgments files the provenance check covers (virtuebench.verify.check_configuration: the workflow's
        start-up sweep and `python -m virtuebench.verify`): every reported judge's, at the levels of `table`."""
        present = levels_present(table)
        return [path for judge in self.reported_judges() for path in self.judgments(judge, present)]

    def frame_folders(self, table: Iterable[Instance], folder: str = "frames", level: int | None = None) -> list[str]:
        """The frame folders of the instances of `table` (under results/<folder>/): with `level`, each video's folder of
        that level (results/frames/<video_id>/<level>/: one frames job per video and level), else each video's own
        folder (the supplement's, one job per video)."""
        suffix = "" if level is None else f"/{level}"
        return sorted({self.res(f"{folder}/{inst.video_id}{suffix}") for inst in table})

    def level_frame_folders(self, table: Iterable[Instance]) -> list[str]:
        """Every level folder of a configured level an instance of `table` has an answer at (the browser's contact
        sheets). The table holds answers at every level a video reaches; only the configured ones are extracted."""
        levels = set(self.config["levels"])
        return sorted({self.res(f"frames/{inst.video_id}/{level}") for inst in table for level in inst.answers if level in levels})

    def frames_table(self) -> str:
        """The table a frame job finds its video in: every converted candidate when curating (frames are needed
        before the final table exists), else the instances table."""
        return self.res("sources/candidates.parquet") if self.curated else self.res("instances.parquet")

    def frames_options(self, level: int | None = None) -> str:
        """The benchmark's levels, sampled as its source samples (CVRR-ES: over the whole clip; else 1 FPS). With
        `level`, that level alone into its own folder (`--level-folder`): the options of the workflow's frames job of
        that level, which no other level's presence changes."""
        sampling = sampling_of(self.config["source"]["name"])
        if level is None:
            return self._frames_options(self.config["levels"], sampling)
        return self._frames_options([level], sampling) + " --level-folder"

    def supplement_frames_options(self) -> str:
        """supplement.level frames over the whole of every video, whatever its length (the paper samples 64 frames
        from each video): a video shorter than 64 s has them closer than 1 s apart, or with short_video_frames: cap,
        one per whole second of it (docs/supplement.md)."""
        sampling = "clip-capped" if self.supplement["short_video_frames"] == "cap" else "clip"
        return self._frames_options([self.supplement["level"]], sampling)

    def supplement_stated_durations(self, source: str) -> bool:
        """Whether the supplement's questions of `source` take the length its release states (LongVideoBench with
        its subtitles interleaved, as its loader samples within `duration`), not the probed one."""
        return source == "longvideobench" and self.supplement["longvideobench_subtitles"] == "interleaved"

    def supplement_convert_settings(self, source: str) -> str:
        """The supplement conversion's settings: every question of every video at the table's level (clip sampling)."""
        settings: dict[str, Any] = {"raw_dir": self.source_raw_dir(source), "levels": [self.supplement["level"]], "sampling": "clip"}
        if self.supplement_stated_durations(source):
            settings["durations"] = "release"
        return json.dumps(settings)

    def supplement_subtitles_option(self, source: str) -> str:
        """The sets job's subtitle options (with a leading space), or "": LongVideoBench's release folder and the frame
        sampling its subtitles are placed against."""
        if not self.supplement_stated_durations(source):
            return ""
        sampling = "clip-capped" if self.supplement["short_video_frames"] == "cap" else "clip"
        return f" --subtitles {shlex.quote(self.source_raw_dir(source))} --frame-sampling {sampling}"

    def _frames_options(self, levels: Iterable[int], sampling: str) -> str:
        frames = self.config["frames"]
        options = [f"--levels {' '.join(map(str, levels))}", f"--jpeg-quality {frames['jpeg_quality']}"]
        if frames["max_side"]:
            options.append(f"--max-side {frames['max_side']}")
        if self.checked.frame_pixels:  # frames.max_pixels, `auto` resolved from the configured models
            options.append(f"--max-pixels {self.checked.frame_pixels}")
        options.append(f"--on-error {frames['on_broken_video']}")
        if sampling != "1fps":  # 1fps is the frames CLI's default
            options.append(f"--sampling {sampling}")
        return " ".join(options)

    # -----------------------------------------------------------------------------------------
    # Models: settings and resources (registry entries have no defaults for the keys read here: these are the only ones)

    def model_entry(self, name: str) -> dict[str, Any]:
        """A model's registry entry: one of config.models, or a curation model (filter, reference answers)."""
        return self.checked.models[name] if name in self.checked.models else self.checked.curation_models[name]

    def model_config(self, model: str) -> str:
        """The model's settings that change its answers (its spec's `answers`: virtuebench.models.spec): a tracked
        param, so editing one reruns exactly that model's jobs, and editing anything else reruns nothing."""
        return json.dumps(self.checked.specs[model].answers, sort_keys=True)

    def cvrr_options_note(self) -> str:
        """The options in effect for this run's CVRR-ES columns, for Tables 2 and 3's captions (a tracked param of
        the tables: switching one writes them again): each model's frames per clip, DSCP's step 1 (where a two-step
        prompt runs) and the reported judge's model and temperature. The published columns are the authors' own."""
        from virtuebench.prompts import get_prompt

        present = set(self.config["levels"])  # CVRR-ES samples every clip at each of the source's levels
        by_level: dict[int, list[str]] = {}
        for model in self.config["models"]:
            for level in self.model_levels(model, present):
                by_level.setdefault(level, []).append(model)
        parts = ["frames per clip " + "; ".join(f"{level} ({', '.join(models)})" for level, models in sorted(by_level.items()))]
        if any(get_prompt(prompt).context_template for prompt in self.config["prompts"]):
            parts.append(f"DSCP step 1 {self.config['dscp_context'].replace('-', ' ')} (dscp_context)")
        settings = self.judge_settings(self.judge)
        if settings.get("kind") == "llm":
            temperature = settings.get("temperature", 0)
            sent = "none sent (the API's default)" if temperature is None else f"{temperature:g}"
            parts.append(f"judge {self.judge}: {settings.get('model', 'gpt-4o-2024-08-06')}, temperature {sent}")
        else:
            parts.append(f"judge {self.judge}")
        return "this run's options: " + "; ".join(parts)

    def prompt_argument(self, prompt: str) -> str:
        """An inference job's `--prompt` value (a tracked param): the prompt's name, and for a two-step prompt asked
        with its context step per question (config.dscp_context: per-question) that option too. So switching
        dscp_context reruns only the two-step prompts' inference, and per-video gives the value every job had
        before the setting existed (its answers stay valid)."""
        from virtuebench.prompts import get_prompt

        scope = self.config.get("dscp_context", "per-video")
        if scope == "per-video" or get_prompt(prompt).context_template is None:
            return prompt
        return f"{prompt} --context-scope {scope}"

    def model_run_config(self, model: str) -> str:
        """The model's settings that change only how its job runs (its spec's `run`: concurrency, retries, batch
        size): untracked, as a string resource (a resource is re-read where the job runs and never reruns a job)."""
        return json.dumps(self.checked.specs[model].run, sort_keys=True)

    def choices_note(self, models: Iterable[str]) -> str:
        """The named registry choices the `models` declare, each at the option this run uses (config.model_choices,
        else the entry's default), for a table's caption: "choice = option (default); ...", or "" where none declares
        one. A tracked param of the tables, so switching an option writes the captions again."""
        in_effect = {}
        for model in models:
            for choice in self.checked.choices.get(model, []):
                in_effect.setdefault(choice.choice, choice.describe())
        return "; ".join(in_effect.values())

    def choices_option(self, models: Iterable[str]) -> str:
        """`--model-choices NOTE` for the tables' command, or "" where no model declares a choice."""
        note = self.choices_note(models)
        return f"--model-choices {shlex.quote(note)}" if note else ""

    def gpus(self, model: str) -> int:
        return self.model_entry(model).get("gpus", 0)

    def cpus_per_gpu(self, model: str) -> int:
        """CPUs per GPU of a GPU job: the entry's cpus_per_gpu, else CPUS_PER_GPU; none for a job without a GPU."""
        return self.model_entry(model).get("cpus_per_gpu", CPUS_PER_GPU) if self.gpus(model) else 0

    def mem_mb(self, model: str) -> int:
        return 1024 * self.model_entry(model).get("mem_gb", 4)

    def runtime(self, model: str) -> int:
        """Minutes (Snakemake's `runtime` resource)."""
        return self.model_entry(model).get("runtime_min", 60)

    def gpu_partition(self, model: str, environ: Mapping[str, str] = os.environ) -> str:
        """GPU jobs go to VB_SLURM_GPU_PARTITION where it is set; empty leaves the cluster's default."""
        return environ.get("VB_SLURM_GPU_PARTITION", "") if self.gpus(model) else ""

    def model_env(self, model: str) -> str:
        """The conda env file of the model's family (registry `env`), relative to the workflow; the core env for the
        reference backends."""
        return self.model_entry(model).get("env", "envs/core.yaml")

    def model_venv_python(self, model: str) -> str | None:
        """The interpreter of the model's route's virtual environment (.envs/<name>/, `make envs`), relative to the
        workflow, where its registry entry names an env."""
        env = self.model_entry(model).get("env")
        return str(Path(".envs") / Path(env).stem / "bin" / "python") if env else None

    # -----------------------------------------------------------------------------------------
    # Judges

    def judge_spec(self, name: str) -> JudgeSpec:
        """A judge by name as its jobs run it: one in use (after any key fallback), resolved by the config check;
        else one defined in config.judges, or rules."""
        if name in self.checked.judge_specs:
            return self.checked.judge_specs[name]
        return JudgeSpec.resolve(name, self.config["judges"].get(name) or {"kind": "rules"})

    def judge_settings(self, name: str) -> dict[str, Any]:
        """A judge's settings by name (its spec's)."""
        return self.judge_spec(name).settings

    def judge_config(self, judge: JudgeSpec, responses: bool = True) -> str:
        """The judge's settings that change its verdicts (its spec's `answers`: its kind's `answers` settings and code
        version, virtuebench.judge.kinds): a tracked param, so a change re-judges (the cache keeps what still holds).
        `responses=False`: a job that judges answers itself, not responses records (the curation's difficulty filter),
        which the judging stage's input settings (virtuebench.judge.inputs) do not reach."""
        return json.dumps(judge.tracked(responses), sort_keys=True)

    def judge_options(self, name: str) -> str:
        """`--judge-options NOTE` for the tables' command: the judge's open decisions at the values in effect
        (virtuebench.judge.inputs.options_note), which the captions state. A tracked param of the tables."""
        from virtuebench.judge.inputs import options_note

        return f"--judge-options {shlex.quote(options_note(self.judge_settings(name)))}"

    def judge_run_config(self, judge: JudgeSpec) -> str:
        """The judge's settings that change only how its job runs (its spec's `run`: key variable, concurrency,
        retries): untracked."""
        return json.dumps(judge.run, sort_keys=True)

    def supplement_judge(self, source: str, form: str) -> JudgeSpec:
        """The judge of a supplement judgments file: mcq (by letter), VideoEval-Pro's authors' grader
        (supplement.videoevalpro_grader: authors), or the run's judge."""
        name = self.supplement_choices.judge_of(source, form)
        if name == "mcq":
            return JudgeSpec.resolve(name, {"kind": "mcq"})
        if name == AUTHORS_GRADER_JUDGE:
            assert self.supplement_grader is not None  # judge_of names it only with videoevalpro_grader: authors
            return self.supplement_grader
        return self.judge_spec(self.judge)

    # -----------------------------------------------------------------------------------------
    # The instances table, the curation and the supplement

    def instances_step(self) -> InstancesStep:
        """make_instances of this source (rules/sources.smk)."""
        if not self.curated:
            return InstancesStep(
                inputs={},
                files={},
                folders={"videos": self.res("videos")},
                params={"source": self.config["source"]["name"], "settings": self.source_settings()},
                threads=2,
                message="Building the instances table from source {params.source}",
                command="python -m virtuebench.sources {params.source} --settings {params.settings:q} "
                "--videos-dir {output.videos} --out {output.instances} --excluded {output.excluded} --threads {threads} > {log} 2>&1",
            )
        annotation = self.config["annotation"]
        return InstancesStep(
            # The curated benchmark: the kept questions with their verified per-level answers (docs/annotation.md).
            inputs={
                "kept": self.res("curation/kept.parquet"),
                # Runs whenever merge_kept has run, even where the kept table came out byte for byte the same (a new
                # rules version re-judges the difficulty filter): Snakemake plans this checkpoint before merge_kept
                # runs, and a checkpoint planned but then found up to date (same checksum) leaves the jobs built from
                # its table unbuilt in that run (Table 2's judgments). Running it is cheap; the inference jobs built
                # from its table track its rows (instances_digest), not its date, so none runs again for a table
                # that is the same.
                "merged": self.res("curation/kept_run.json"),
                "drafts": self.reference_drafts(),
                "batches": self.res("annotation/batches"),
                "verified": self.verified_annotations(),  # so a corrected batch re-imports
            },
            files={"check": self.res("annotation/answerability_check.csv")},
            folders={},
            params={
                "verified": annotation["verified_dir"] or "",
                "allow_drafts": "--allow-drafts" if annotation["allow_drafts"] else "",
                "levels": self.config["levels"],
            },
            threads=1,
            message="Importing the verified annotations into the instances table",
            command="python -m virtuebench.curation import --kept {input.kept} --verified {params.verified:q} "
            "--batches {input.batches} --drafts {input.drafts} {params.allow_drafts} --levels {params.levels} "
            "--out {output.instances} --report {output.excluded} --check {output.check} > {log} 2>&1",
        )

    def source_settings(self) -> str:
        """The source's settings, as its adapter's --settings reads them."""
        return json.dumps(self.config["source"]["settings"], sort_keys=True)

    def verified_annotations(self) -> list[str]:
        """The verified annotation batches (annotation.verified_dir, read when the plan is asked)."""
        folder = self.config["annotation"]["verified_dir"]
        return sorted(str(path) for path in Path(folder).glob("*.csv")) if folder else []

    def reference_drafts(self) -> list[str]:
        """The reference model's draft answers at every configured level (a level no kept video reaches gives an
        empty file). Not read from the kept table, so a dry run shows these jobs before it exists."""
        model = self.config["curation"]["reference_model"]
        return [self.res(f"curation/references/{model}/{level}.jsonl") for level in self.config["levels"]]

    def source_raw_dir(self, source: str) -> str:
        """An already downloaded release (config.curation.raw_dirs), else the download rule's folder."""
        return self.config["curation"]["raw_dirs"].get(source) or self.res(f"sources/{source}/raw")

    def curation_source_settings(self, source: str) -> str:
        """convert_source's --settings for a curation source: its release, the levels, and the adapter options the
        curation's choices set (curation.moviechat_breakpoint). Only a choice away from its default adds an option, so
        the default's settings, a tracked param, stay as they were."""
        settings: dict[str, Any] = {"raw_dir": self.source_raw_dir(source), "levels": self.config["levels"]}
        options = {}
        if source == "moviechat-1k" and self.config["curation"]["moviechat_breakpoint"] == "include":
            options["include_breakpoint"] = True
        if options:
            settings["options"] = options
        return json.dumps(settings)

    def source_download(self, source: str) -> list[str]:
        """The download job's record, unless the release is already on disk (config.curation.raw_dirs)."""
        return [] if self.config["curation"]["raw_dirs"].get(source) else [self.res(f"sources/{source}/raw/download.json")]

    def source_revision_option(self, source: str) -> str:
        revision = self.config["curation"]["revisions"].get(source)
        return f"--revision {revision}" if revision else ""

    def curation_model(self, key: str) -> dict[str, Any]:
        """The registry entry of a curation model: key filter_model or reference_model."""
        return self.checked.curation_models[self.config["curation"][key]]

    def difficulty_judge_config(self) -> str:
        """The tracked settings of the difficulty filter's judge (curation.difficulty_judge), which judges answers
        itself, not responses records (judge_config with responses=False)."""
        return self.judge_config(self.judge_spec(self.curation["difficulty_judge"]), responses=False)

    def difficulty_judge_run_config(self) -> str:
        return self.judge_run_config(self.judge_spec(self.curation["difficulty_judge"]))

    def filter_frame_max_side(self) -> int | str:
        """The difficulty filter's --frame-max-side: curation.filter_frame_max_side, or "none" (full size)."""
        return self.curation["filter_frame_max_side"] or "none"

    def supplement_pool(self, source: str) -> list[str]:
        """question_pool filtered: the questions of the source the curation's open-ended filters keep, run on the
        supplement's own candidates (clip sampling: none lost to the 1 FPS grid); none for a source that is open-ended
        by design, VideoEval-Pro, whose questions all stay."""
        if self.supplement["question_pool"] != "filtered" or source not in self.supplement_filtered_sources():
            return []
        return [self.res(f"supplement/{source}/pool/answerability.parquet")]

    def supplement_filtered_sources(self) -> list[str]:
        return [source for source in self.supplement_sources if "mcq" in supplement_forms(source)]

    def supplement_judgments(self) -> list[str]:
        """The supplement table's judgments: each model, source and form (OE only for VideoEval-Pro, as the paper's
        table)."""
        return [
            self.res(f"supplement/judgments/{model}/{source}/{form}.jsonl")
            for model in self.supplement["models"]
            for source in self.supplement_sources
            for form in supplement_forms(source)
        ]

    def supplement_max_questions_option(self) -> str:
        """The sets job's `--max-questions N` (supplement.max_questions_per_source), or "" for every question."""
        limit = self.supplement["max_questions_per_source"]
        return f"--max-questions {limit}" if limit else ""

    def supplement_seed(self) -> int:
        """The sets job's --seed: supplement.seed where a sample is drawn (max_questions_per_source), else 0, so a changed
        seed alone remakes no set (and no supplement inference or judging after it)."""
        return self.supplement["seed"] if self.supplement["max_questions_per_source"] else 0

    def supplement_suffix(self) -> str:
        """The table's --videoevalpro-suffix: "yes" where VideoEval-Pro's open-ended prompt carries its authors' suffix."""
        return "yes" if self.supplement_choices.uses_suffix else "no"

    def supplement_subtitles(self) -> str:
        """The table's --longvideobench-subtitles: "interleaved", or "false" (none)."""
        return "interleaved" if self.supplement["longvideobench_subtitles"] == "interleaved" else "false"

    # -----------------------------------------------------------------------------------------
    # The report: scores, comparisons, tables, figures and the browser (rules/report.smk, rules/browser.smk)

    @property
    def report(self) -> Mapping[str, Any]:
        """config.report, every default filled in: the scoring, comparison, table and browser options."""
        return self.config["report"]

    @property
    def scores_method(self) -> str:
        """virtuebench.metrics.METHOD, a tracked param of the scores: a new scoring method scores the judgments again."""
        return SCORES_METHOD

    @property
    def comparisons_method(self) -> str:
        """virtuebench.comparisons.METHOD, a tracked param of the comparisons: a new method makes them again."""
        return COMPARISONS_METHOD

    @property
    def paper_prompt(self) -> str:
        """The prompt of the paper's Tables 1 and 2 (the honesty prompt), beside which the run's numbers are put."""
        return PAPER_PROMPT

    def categories(self) -> str:
        """report.categories as the scoring and report CLIs' --categories read it: JSON, keys sorted."""
        return json.dumps(self.report["categories"], sort_keys=True)

    def compare_pairs_option(self) -> str:
        """The comparisons' `--pair A B` options, one per pair of report.compare."""
        return " ".join(f"--pair {a} {b}" for a, b in self.report["compare"])

    def holm_tarone_option(self) -> str:
        return "--holm-tarone" if self.report["holm_tarone"] else "--no-holm-tarone"

    def intervals_option(self) -> str:
        """The tables' `--intervals` (report.intervals), or ""."""
        return "--intervals" if self.report["intervals"] else ""

    def paper_names_option(self) -> str:
        """The paper-vs-run table's `--paper-name MODEL=ROW` options: each run model beside its row of the paper."""
        return " ".join(f"--paper-name {model}={row}" for model, row in self.paper_rows().items())
