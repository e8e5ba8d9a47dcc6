# Input functions and helpers shared by the rules. Rules hold no logic of their own.
import atexit
import json
import os
import re
from functools import lru_cache

from snakemake.settings.types import DeploymentMethod

from virtuebench.instances import content_digest, read_instances
from virtuebench.instances import videos as video_paths
from virtuebench.inference import items_for_level
from virtuebench.curation.supplement import AUTHORS_GRADER_JUDGE, Choices, forms_of as supplement_forms
from virtuebench.judge.letter_grade import grader_settings
from virtuebench.config import logs_folder, run_settings, tracked_settings
from virtuebench.sources import REAL_SOURCES, sampling_of
from virtuebench import verify
from virtuebench.records import stable_hash
from virtuebench.support import runlock
from virtuebench.support.runlock import snakemake_mode


# Where this configuration's results and logs go (config.results): every path below is built from these, so two
# configurations with different results folders (the demo, CVRR-ES, a paper run) never touch each other's files.
RESULTS = os.path.normpath(config["results"])
LOGS = logs_folder(RESULTS)
JUDGE_CACHE = config["judge_cache"] or f"{RESULTS}/judge_cache.sqlite"
CURATION_CACHE = CURATION["cache"] or f"{RESULTS}/curation/llm_cache.sqlite"


def res(path):
    """A path under the results folder (wildcards kept)."""
    return f"{RESULTS}/{path}"


def logpath(path):
    """A path under the logs folder (wildcards kept)."""
    return f"{LOGS}/{path}"


# The package is importable in any environment the rules run in, installed or not.
# Without conda, a job runs with the interpreter that runs Snakemake (its virtual environment), whatever the
# submitting shell's PATH holds: a job on a cluster node finds the same packages as the run that submitted it.
USE_CONDA = DeploymentMethod.CONDA in workflow.deployment_settings.deployment_method
shell.prefix(
    ("" if USE_CONDA else f"export PATH={Path(sys.executable).parent}:$PATH; ")
    + "export PYTHONPATH="
    + str(Path(workflow.basedir) / "src")
    + "${{PYTHONPATH:+:$PYTHONPATH}}; "
)


wildcard_constraints:
    model=r"[A-Za-z0-9][A-Za-z0-9._-]*",
    prompt=r"[a-z0-9_]+",
    level=r"\d+",
    judge=r"[A-Za-z0-9][A-Za-z0-9._-]*",
    a=r"[A-Za-z0-9][A-Za-z0-9._-]*",
    b=r"[A-Za-z0-9][A-Za-z0-9._-]*",
    video_id=r"[A-Za-z0-9][A-Za-z0-9._-]*",
    source="|".join(map(re.escape, sorted(REAL_SOURCES))),  # the curated benchmark's sources
    form=r"mcq|oe",  # the supplement's two forms of a source's questions


@lru_cache(maxsize=4)
def _instances_at(path, mtime):
    return read_instances(path)


def instances():
    """The instances table, once the checkpoint that makes it has run."""
    path = checkpoints.make_instances.get().output.instances
    return _instances_at(path, os.path.getmtime(path))


@lru_cache(maxsize=4)
def _videos_at(path, mtime):
    return video_paths(_instances_at(path, mtime))  # refuses a video_id with two files


def video_path(wildcards):
    """The video of a frame job, looked up in every converted candidate when curating (frames are
    needed before the final table exists), else in the instances table; one dict per table version."""
    if CURATED:
        path = checkpoints.collect_candidates.get().output[0]
    else:
        path = checkpoints.make_instances.get().output.instances
    return _video_in(path, wildcards.video_id)


def _video_in(table, video_id):
    paths = _videos_at(table, os.path.getmtime(table))
    if video_id not in paths:
        raise ValueError(f"video_id {video_id!r} is not in {table}")
    return paths[video_id]


def video_stamp(wildcards):
    """Size and modification time of the video: a tracked param, so a changed file re-extracts its frames."""
    return _stamp(video_path(wildcards))


def _stamp(path):
    try:
        stat = os.stat(path)
    except OSError:
        return "missing"
    return f"{stat.st_size}-{int(stat.st_mtime)}"


def source_settings(wildcards):
    return json.dumps(config["source"]["settings"], sort_keys=True)


def frames_options(wildcards):
    """The benchmark's levels, sampled as its source samples (CVRR-ES: over the whole clip; else 1 FPS)."""
    return _frames_options(config["levels"], sampling_of(config["source"]["name"]))


def _frames_options(levels, sampling):
    frames = config["frames"]
    options = [f"--levels {' '.join(map(str, levels))}", f"--jpeg-quality {frames['jpeg_quality']}"]
    if frames["max_side"]:
        options.append(f"--max-side {frames['max_side']}")
    if CHECKED.frame_pixels:  # frames.max_pixels, `auto` resolved from the configured models
        options.append(f"--max-pixels {CHECKED.frame_pixels}")
    options.append(f"--on-error {frames['on_broken_video']}")
    if sampling != "1fps":  # 1fps is the frames CLI's default
        options.append(f"--sampling {sampling}")
    return " ".join(options)


def model_levels(model, table=None):
    """The levels a model runs at: configured, within its max_level, and held by some instance (of `table`, else
    of the instances table the checkpoint made)."""
    max_level = MODELS[model].get("max_level")
    present = {level for inst in (instances() if table is None else table) for level in inst.answers}
    return [level for level in config["levels"] if level in present and (max_level is None or level <= max_level)]


def frames_for_level(wildcards):
    level = int(wildcards.level)
    return sorted({f"{RESULTS}/frames/{inst.video_id}" for inst in items_for_level(instances(), level)})


def model_config(wildcards):
    """The model's settings that change its answers (its spec's `answers`: virtuebench.models.spec): a tracked param,
    so editing one reruns exactly that model's jobs, and editing anything else reruns nothing."""
    return json.dumps(CHECKED.specs[wildcards.model].answers, sort_keys=True)


def model_run_config(wildcards):
    """The model's settings that change only how its job runs (its spec's `run`: concurrency, retries, batch size):
    untracked, as a string resource (a resource is re-read where the job runs and never reruns a job)."""
    return json.dumps(CHECKED.specs[wildcards.model].run, sort_keys=True)


def judgments(judge=None, table=None):
    return [
        f"{RESULTS}/judgments/{judge or JUDGE}/{model}/{prompt}/{level}.jsonl"
        for model in config["models"]
        for prompt in config["prompts"]
        for level in model_levels(model, table)
    ]


def browser_frames():
    """Every frame folder an instance's level uses (the browser's thumbnails)."""
    return sorted({f"{RESULTS}/frames/{inst.video_id}" for inst in instances()})


#: Judgment files the benchmark's rules file shows in the browser beside the runs' own (CVRR-ES: the published ones).
BROWSER_JUDGMENTS = []


def browser_judgments():
    """The report judge's records, those of every judge it is compared with, and the benchmark's (BROWSER_JUDGMENTS)."""
    judges = dict.fromkeys([JUDGE, *(name for pair in CHECKED.compare for name in pair)])
    paths = [path for judge in judges for path in judgments(judge)]
    return paths + BROWSER_JUDGMENTS


def judge_settings(name):
    """A judge's settings by name: one in use (after any key fallback), one defined in config.judges, or rules."""
    return CHECKED.judges.get(name) or config["judges"].get(name) or {"kind": "rules"}


def judge_config(wildcards):
    """The judge's settings that change its verdicts (its kind's `answers` settings and code version, as the kind
    registers them: virtuebench.judge.kinds): a tracked param, so a change re-judges (the cache keeps what still holds)."""
    return tracked_settings("judge", judge_settings(wildcards.judge), CONFIG_DIR)


def judge_upstream(wildcards):
    """What the judged responses were made from (the model's answer settings and the level's instance rows): a tracked
    param of the judge job, so a change reruns the judgment even where its responses file is gone (an interrupted
    re-inference: Snakemake rebuilds no deleted file whose downstream output is newer, snakemake/snakemake#1978)."""
    return stable_hash([model_config(wildcards), instances_digest(wildcards)], length=16)


def judge_run_config(wildcards):
    """The judge's settings that change only how its job runs (key variable, concurrency, retries): untracked."""
    return run_settings("judge", judge_settings(wildcards.judge), CONFIG_DIR)


def default_targets():
    if BENCHMARK.targets is not None:  # a benchmark with tables of its own declares them (virtuebench.benchmarks)
        return [res(path) for path in BENCHMARK.targets]
    targets = [res("table1.tex"), res("table2.tex"), res("fig4.png"), res("fig6.png"), res("scores.csv")]
    targets += [res("comparisons.csv"), res("table2_trust.tex"), res("fig_levels.png"), res("browser/index.html")]
    targets += [res("fig3_composition.png"), res("supplement/fig1_sources.png")]
    if CURATED:
        targets += [res("stats/sources.tex"), res("curation/filter_counts.csv")]
        if SUPPLEMENT["models"]:
            targets.append(res("supplement/table1.tex"))
    return targets


# Model registry entries (config/models.schema.yaml) have no defaults for the keys read below: the
# .get defaults here are the only ones.


def model_python(wildcards):
    """The interpreter of a model's inference job: its route's virtual environment (.envs/<name>/, `make envs`) where
    one is built and conda is not used; else `python` (conda's env, or the one that runs Snakemake). A string
    resource, untracked: which interpreter runs the job changes no answer the registry's `env` does not already track."""
    env = model_entry(wildcards.model).get("env")
    venv = Path(workflow.basedir) / ".envs" / Path(env).stem / "bin" / "python" if env else None
    return str(venv) if venv and not USE_CONDA and venv.exists() else "python"


def model_env(wildcards):
    """The conda env of the model's family (registry `env`); the core env for the reference backends."""
    return str(Path(workflow.basedir) / model_entry(wildcards.model).get("env", "envs/core.yaml"))


def model_resource(key, default):
    """A per-model cluster resource from the registry entry (gpus, mem_gb, runtime_min)."""
    return lambda wildcards: model_entry(wildcards.model).get(key, default)


def gpu_partition(wildcards):
    """GPU jobs go to VB_SLURM_GPU_PARTITION when it is set; empty leaves the cluster's default."""
    return os.environ.get("VB_SLURM_GPU_PARTITION", "") if model_entry(wildcards.model).get("gpus", 0) else ""


def model_cpus_per_gpu(wildcards):
    return 8 if model_entry(wildcards.model).get("gpus", 0) else 0


def model_mem_mb(wildcards):
    return 1024 * model_entry(wildcards.model).get("mem_gb", 4)


def model_entry(name):
    """A model's registry entry: one of config.models, or a curation model (filter, reference answers)."""
    return MODELS[name] if name in MODELS else CHECKED.curation_models[name]


# ---------------------------------------------------------------------------------------------
# Curation (source virtuebench: rules/curation.smk)


def source_raw_dir(source):
    """An already downloaded release (config.curation.raw_dirs), else the download rule's folder."""
    return CURATION["raw_dirs"].get(source) or f"{RESULTS}/sources/{source}/raw"


def source_download(wildcards):
    return [] if CURATION["raw_dirs"].get(wildcards.source) else f"{RESULTS}/sources/{wildcards.source}/raw/download.json"


def source_revision_option(source):
    revision = CURATION["revisions"].get(source)
    return f"--revision {revision}" if revision else ""


def curation_model_config(key):
    return json.dumps(CHECKED.specs[CURATION[key]].answers, sort_keys=True)


def curation_model_run_config(key):
    return json.dumps(CHECKED.specs[CURATION[key]].run, sort_keys=True)


def kept_instances():
    path = checkpoints.merge_kept.get().output.kept
    return _instances_at(path, os.path.getmtime(path))


def kept_table(wildcards):
    """The kept questions' table for the jobs built from it (reference drafts, annotation batches), marked ancient:
    a rewrite with the same questions (a new rules version re-judges the difficulty filter, and merge_kept writes
    the same questions again) reruns none of them; a change in the questions does (kept_digest, a tracked param).
    Taken through the checkpoint, so these jobs are built, and their digest read, once merge_kept has run."""
    return ancient(str(checkpoints.merge_kept.get().output.kept))  # str(): ancient() would flag the checkpoint's own output


def kept_digest(wildcards):
    """A digest of the kept questions a job reads (a draft job: those with its level)."""
    return _rows_digest(checkpoints.merge_kept.get().output.kept, _level_of(wildcards))


def instances_digest(wildcards):
    """A digest of the instances an inference job asks (those with its level): a tracked param beside the table's
    ancient input, so the instances table written again with the same rows (make_instances reruns whenever the
    curation's kept table is rewritten) reruns no inference, and a changed row reruns the jobs whose level has it."""
    return _rows_digest(checkpoints.make_instances.get().output.instances, _level_of(wildcards))


def _level_of(wildcards):
    return int(wildcards.level) if "level" in wildcards.keys() else None


def _rows_digest(path, level):
    return _rows_digest_at(path, os.path.getmtime(path), level)


@lru_cache(maxsize=64)
def _rows_digest_at(path, mtime, level):
    table = _instances_at(path, mtime)
    return content_digest(table if level is None else items_for_level(table, level))


def kept_frames_for_level(wildcards):
    # The frame jobs look their video up in the candidates table: ask for it first, so that no frame
    # job is created (and its video path param evaluated) before that checkpoint has run.
    checkpoints.collect_candidates.get()
    level = int(wildcards.level)
    return sorted({f"{RESULTS}/frames/{inst.video_id}" for inst in items_for_level(kept_instances(), level)})


def reference_drafts(wildcards):
    """The reference model's draft answers at every configured level (a level no kept video reaches
    gives an empty file). Not read from the kept table, so a dry run shows these jobs before it exists."""
    model = CURATION["reference_model"]
    return [f"{RESULTS}/curation/references/{model}/{level}.jsonl" for level in config["levels"]]


def supplement_frames(wildcards):
    """Frame folders of the supplement set's videos (once the sets exist)."""
    path = checkpoints.make_supplement_sets.get(source=wildcards.source).output[wildcards.form]
    return sorted({f"{RESULTS}/supplement/frames/{wildcards.source}/{inst.video_id}" for inst in _instances_at(path, os.path.getmtime(path))})


def supplement_video_path(wildcards):
    """The video of a supplement frame job, from that source's supplement candidates."""
    return _video_in(checkpoints.make_supplement_sets.get(source=wildcards.source).output.oe, wildcards.video_id)


def supplement_video_stamp(wildcards):
    return _stamp(supplement_video_path(wildcards))


def supplement_frames_options(wildcards):
    """SUPPLEMENT level frames over the whole of every video, whatever its length (the paper samples 64
    frames from each video): a video shorter than 64 s has them closer than 1 s apart, or with
    short_video_frames: cap, one per whole second of it (docs/supplement.md)."""
    return _frames_options([SUPPLEMENT["level"]], "clip-capped" if SUPPLEMENT["short_video_frames"] == "cap" else "clip")


def supplement_pool(wildcards):
    """question_pool filtered: the questions of the source the curation's open-ended filters keep (none for a source
    that is open-ended by design, VideoEval-Pro, whose questions all stay)."""
    if SUPPLEMENT["question_pool"] != "filtered" or wildcards.source not in supplement_filtered_sources():
        return []
    return [f"{RESULTS}/curation/{wildcards.source}/answerability.parquet"]


# The supplement's protocol choices (docs/supplement.md); the authors' grader's settings hold its prompt file's sha256
# (the config check has read the file), so a changed prompt re-judges VideoEval-Pro.
SUPPLEMENT_CHOICES = Choices(**{name: SUPPLEMENT[name] for name in Choices.__dataclass_fields__})
SUPPLEMENT_GRADER = grader_settings(SUPPLEMENT["authors_grader_prompt"]) if SUPPLEMENT["videoevalpro_grader"] == "authors" else None


def supplement_prompt(wildcards):
    """The prompt of a supplement inference job: mcq_prompt or oe_prompt (VideoEval-Pro's open-ended one with its
    authors' suffix where supplement.videoevalpro_suffix says so)."""
    return SUPPLEMENT_CHOICES.prompt_of(wildcards.source, wildcards.form)


def supplement_judge(wildcards):
    """(name, settings) of the judge of a supplement judgments file: mcq (by letter), VideoEval-Pro's authors'
    grader (supplement.videoevalpro_grader: authors), or the run's judge."""
    name = SUPPLEMENT_CHOICES.judge_of(wildcards.source, wildcards.form)
    if name == "mcq":
        return name, {"kind": "mcq"}
    if name == AUTHORS_GRADER_JUDGE:
        return name, SUPPLEMENT_GRADER
    return JUDGE, judge_settings(JUDGE)


def supplement_filtered_sources():
    return [source for source in SUPPLEMENT_SOURCES if "mcq" in supplement_forms(source)]


def verified_annotations(wildcards):
    folder = config["annotation"]["verified_dir"]
    return sorted(str(path) for path in Path(folder).glob("*.csv")) if folder else []


# ---------------------------------------------------------------------------------------------
# The run lock and the start-up sweep (docs/reliability.md)

#: Rules whose outputs are made from the judgments (directly or through results/scores.csv or the browser); a
#: benchmark's rules file adds its own.
REPORT_RULES = ["compute_scores", "compare_arms", "make_tables", "make_fig6", "make_fig_levels", "make_browser", "link_browser", "make_supplement_table"]


def report_outputs():
    """Every report output of this configuration: what the judgments are read into."""
    defined = {rule.name for rule in workflow.rules}
    outputs = [str(path) for name in REPORT_RULES if name in defined for path in getattr(rules, name).output]
    outputs += [path for a, b in CHECKED.compare for path in expand(rules.compare_judges.output, a=a, b=b)]
    return outputs


def guard_run():
    """Before the DAG is built: a real run takes the results folder's run lock (one live run, even after `snakemake
    --unlock`), then every run checks the provenance chain of this configuration's results. A real run removes what
    is stale, and everything made from it, so that Snakemake rebuilds exactly that; a dry run says what it would
    remove. Only the main process of a command-line run does this (not a cluster job, not --unlock, --list ...)."""
    mode = snakemake_mode()
    if not workflow.is_main_process or mode == "no-jobs":
        return
    if mode == "run":
        lock = Path(runlock.lock_path(RESULTS)).resolve()  # absolute: Snakemake leaves --directory before the process exits
        try:
            holder, note = runlock.acquire(lock, RESULTS)
        except runlock.RunLocked as error:
            sys.exit(f"virtuebench: {error}")
        atexit.register(runlock.release, lock, holder)  # at any exit of this process; kill -9 leaves a dead pid
        if note:
            print(f"virtuebench WARNING: {note}", file=sys.stderr)
        others = [other for other in runlock.live_holders() if other != holder]
        if any(Path(".snakemake/locks").glob("*.lock")) and not others:  # Snakemake may stop on them: unlocking is safe
            print(
                "virtuebench: Snakemake's lock of an earlier run is left in .snakemake/locks (a run killed or cut off), "
                "and no other run is live in this folder: `snakemake --unlock` is safe here, then the same command again.",
                file=sys.stderr,
            )
    table = Path(res("instances.parquet"))
    if not table.exists():
        return
    listed = _instances_at(str(table), os.path.getmtime(table))
    judges = dict.fromkeys([JUDGE, *(name for pair in CHECKED.compare for name in pair)])
    remembered = verify.Remembered(f"{runlock.state_dir(RESULTS)}/chain.json")  # checks that passed on the same files
    chain = verify.check([path for judge in judges for path in judgments(judge, listed)], listed, report_outputs(), remembered)
    remembered.save()
    if not chain.problems:
        return
    lines = "\n  ".join(map(str, chain.problems))
    print(f"virtuebench WARNING: stale results, made from files that changed or are gone:\n  {lines}", file=sys.stderr)
    if mode == "run":
        verify.remove(chain.stale)
        print(f"virtuebench: removed {len(chain.stale)} stale file(s) and folder(s); this run rebuilds them", file=sys.stderr)
    else:
        print(f"virtuebench: a real run removes these {len(chain.stale)} file(s) and folder(s) first and rebuilds them (not in this dry run's plan)", file=sys.stderr)
