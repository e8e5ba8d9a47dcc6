# The one path from the configuration to the rules: the configuration checked, then the plan (PLAN, virtuebench.plan)
# built from it once, here; the functions below answer what the rules ask from the plan, adapting Snakemake's
# wildcards, checkpoints and tables to it. Rule files read PLAN and these functions, nothing else (tests/workflow/
# test_rule_values.py); the policy is the plan's, and only what needs Snakemake is here.
import atexit
import json
import os
import re
import sys
from functools import lru_cache
from pathlib import Path

from snakemake.settings.types import DeploymentMethod
from snakemake.utils import validate

from virtuebench.config import ConfigError, check_config, start_warnings
from virtuebench.frames import read_provenance
from virtuebench.instances import content_digest, read_instances
from virtuebench.instances import videos as video_paths
from virtuebench.inference import items_for_level
from virtuebench.judge.cache import KIND as VERDICTS, import_sqlite
from virtuebench.plan import REPORT_RULES, EmptyResult, Plan, levels_present
from virtuebench.sources import REAL_SOURCES
from virtuebench import verify
from virtuebench.records import stable_hash
from virtuebench.report.packed import summarize_report
from virtuebench.report.summary import summarize_excluded, summarize_invalid, summarize_outdated
from virtuebench.support import runlock
from virtuebench.support.faults import stop_on_environment_fault
from virtuebench.support.fingerprint import Fingerprints
from virtuebench.support.runlock import STATE_ROOT, probe_writable, snakemake_mode
from virtuebench.support.store import Store


def start_plan():
    """The plan of this run's configuration, or a one-line stop naming what is wrong: the state folder writable, the
    configuration checked (virtuebench.config.check_config), filled with the schema's defaults and validated, the
    warnings said, and the source's items checked for an empty result where its settings tell them before any job."""
    checks_results = workflow.is_main_process and snakemake_mode() != "no-jobs"
    # The workflow's records and Snakemake's log are under .snakemake: a full or unwritable one stops here, in one line.
    if checks_results:
        stop_on_environment_fault(lambda: probe_writable(STATE_ROOT))
    # The schemas (and each setting's rerun class, x-rerun) beside the Snakefile, whichever virtuebench is imported.
    config_dir = Path(workflow.basedir) / "config"
    try:
        checked = check_config(config, config_dir, base_dir=".", defer_keys=True)
    except ConfigError as error:
        sys.exit(f"virtuebench: {error}")
    validate(config, str(config_dir / "schema.yaml"))  # fills in the schema's defaults
    # A dry run needs no API key, but names each one a real run would stop on (on_start).
    for warning in start_warnings(checked, runs_jobs=snakemake_mode() == "run"):
        print(f"virtuebench WARNING: {warning}", file=sys.stderr)
    plan = Plan.build(config, checked, config_dir)
    # An empty result is an error: a source, level or model that yields no item stops the run here where the config
    # tells (the synthetic demo's items, a CVRR-ES folder without its annotations), else once the table is read
    # (instances()).
    if checks_results:
        try:
            preview = plan.preview()
            if preview is not None and (empty := plan.empty_results(preview)):
                raise EmptyResult(empty, f"source {plan.source_name} (planned from its settings)")
        except ValueError as error:
            sys.exit(f"virtuebench: {error}")
    return plan


#: The plan: every question the rules ask (targets, levels, resources, frame options, the judge per table, the report's
#: options), answered once from the checked configuration (virtuebench.plan).
PLAN = start_plan()


def res(path):
    """A path under this configuration's results folder (config.results; wildcards kept): every output is one."""
    return PLAN.res(path)


def logpath(path):
    """A path under this configuration's logs folder (wildcards kept)."""
    return PLAN.logpath(path)


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
    """The instances table, once the checkpoint that makes it has run: the first input function that reads it (before
    any job that reads it) stops the run where a configured level or model yields none of its items."""
    path = checkpoints.make_instances.get().output.instances
    return _checked_instances_at(path, os.path.getmtime(path))


@lru_cache(maxsize=4)
def _checked_instances_at(path, mtime):
    table = _instances_at(path, mtime)
    if empty := PLAN.empty_results(table):
        # Snakemake shows an input function's error in a block of its own and runs no onerror after it: the error, and
        # what the source left out, are said here in full first.
        if left_out := summarize_excluded(res("instances_excluded.csv")):
            print(f"virtuebench WARNING: {left_out}", file=sys.stderr)
        print(f"virtuebench: {EmptyResult(empty, path)}", file=sys.stderr)
        raise EmptyResult([f"{len(empty)} empty result(s), each named above with its config key"], path)
    return table


@lru_cache(maxsize=4)
def _videos_at(path, mtime):
    return video_paths(_instances_at(path, mtime))  # refuses a video_id with two files


def video_path(wildcards):
    """The video of a frame job, in the table the plan names (PLAN.frames_table), once its checkpoint has run."""
    return _video_in(_frames_table(), wildcards.video_id)


def _frames_table():
    return (checkpoints.collect_candidates if PLAN.curated else checkpoints.make_instances).get().output[0]


def _video_in(table, video_id):
    paths = _videos_at(table, os.path.getmtime(table))
    if video_id not in paths:
        raise ValueError(f"video_id {video_id!r} is not in {table}")
    return paths[video_id]


def video_stamp(wildcards):
    """The video's content fingerprint (virtuebench.support.fingerprint: its size and a hash of sampled blocks): a
    tracked param, so a changed video re-extracts its frames, and a touched or copied one (a new date) does not."""
    return _stamp(video_path(wildcards))


#: Fingerprints kept by file stamp under .snakemake/virtuebench/ (the working directory's): a video is read once after
#: it is touched or copied, then found by its new stamp.
FINGERPRINTS = Fingerprints()


def _stamp(path):
    return FINGERPRINTS.of(path)


def frames_level_options(wildcards):
    """The frames job's options: its level alone, into its own folder (the others' are not its business), and the
    provenance its folder records (frames_provenance)."""
    level = int(wildcards.level)
    return f"{PLAN.frames_options(level)} --provenance {frames_provenance(wildcards.video_id, level)}"


def frames_provenance(video_id, level):
    """What a level folder's frames are made from: the level's frames options and the video's content fingerprint
    (extraction is deterministic: the same video and options give the same frames, tests/test_frames.py)."""
    return stable_hash([PLAN.frames_options(level), _stamp(_video_in(_frames_table(), video_id))], length=16)


def frames_for_level(wildcards):
    """The level folders of the videos an inference job asks about. A folder whose recorded provenance is what this
    run would make is ancient: its date (a copy, a re-extraction of the same frames) reruns nothing. Any other folder
    (made from another video or other options, or missing: Snakemake reruns a job whose missing input is made, ancient
    or not) is not: its extraction in this run reruns the job.
    Snakemake never checks the params of a job downstream of one it reruns where every input is ancient (dag.py masks
    them), so a folder whose frames will change must not be marked ancient."""
    level = int(wildcards.level)
    videos = sorted({inst.video_id for inst in items_for_level(instances(), level)})
    return [ancient(folder) if same else folder for folder, same in map(_level_folder, videos, [level] * len(videos))]


@lru_cache(maxsize=None)
def _level_folder(video_id, level):
    """(the level folder, whether it holds what this run would make): once per folder, not once per inference job that
    reads it (every model and prompt of the level: 250 jobs over about 900 videos at paper scale)."""
    folder = res(f"frames/{video_id}/{level}")
    return folder, read_provenance(folder) == frames_provenance(video_id, level)


def frames_digest(wildcards):
    """What the frames of an inference job's level are made from: the level's frames options and the content
    fingerprint of each of its videos. The frames themselves are not there to hash when the DAG is built; extraction
    is deterministic (the same video and options give the same frames, tests/test_frames.py), so this changes exactly
    when the frames would."""
    level = int(wildcards.level)
    table = _frames_table()
    return _frames_digest_at(table, os.path.getmtime(table), instances_digest(wildcards), level)


@lru_cache(maxsize=64)
def _frames_digest_at(table, mtime, rows, level):
    videos = sorted({inst.video_id for inst in items_for_level(instances(), level)})
    return stable_hash([(video, frames_provenance(video, level)) for video in videos], length=16)


def asked_digest(wildcards):
    """An inference job's tracked param: the instance rows it asks (instances_digest) and what their frames are made
    from (frames_digest). One param (`rows`), so that the jobs built on run_inference, which set their own `rows`,
    track what they tracked before."""
    return stable_hash([instances_digest(wildcards), frames_digest(wildcards)], length=16)


def model_config(wildcards):
    return PLAN.model_config(wildcards.model)


def inference_prompt(wildcards):
    return PLAN.prompt_argument(wildcards.prompt)


def model_run_config(wildcards):
    return PLAN.model_run_config(wildcards.model)


def judgments(judge=None, table=None):
    """A judge's judgments files (the report judge's by default), at the levels of `table`, else of the instances
    table the checkpoint made."""
    return PLAN.judgments(judge, levels_present(instances() if table is None else table))


def browser_frames():
    """Every level folder an instance has an answer at (the browser's thumbnails)."""
    return PLAN.level_frame_folders(instances())


#: What the benchmark's rules file has the browser show (show_in_browser): judgment files beside the runs' own
#: (CVRR-ES: the published ones), the scores file whose intervals and trust scores it shows (VirtueBench's scores.csv:
#: rules/report.smk), the comparisons file whose paired differences it shows (comparisons.csv), and the benchmark's
#: own options of the browser (CVRR-ES's empty-prediction rule: rules/cvrr.smk).
_BROWSER_SHOWS = {"judgments": [], "scores": [], "comparisons": [], "options": []}


def show_in_browser(judgments=(), scores=(), comparisons=(), options=()):
    """Called by the benchmark's rules file, before rules/browser.smk is included: what the browser shows of it."""
    for key, added in (("judgments", judgments), ("scores", scores), ("comparisons", comparisons), ("options", options)):
        _BROWSER_SHOWS[key].extend(added)


def browser_scores(wildcards):
    return _BROWSER_SHOWS["scores"]


def browser_comparisons(wildcards):
    return _BROWSER_SHOWS["comparisons"]


def browser_options():
    """The benchmark's own options of the browser's command, as one string."""
    return " ".join(_BROWSER_SHOWS["options"])


def browser_legend():
    """The registry's words on each model (backend, description), as JSON, for the browser's legend: a
    resource, not a param, so editing a description reruns nothing (docs/reruns.md); the next rebuild shows it."""
    from virtuebench.browser import legend_entries

    models = PLAN.checked.models
    entries = {model: PLAN.model_entry(model) for model in models}
    return json.dumps(legend_entries(entries, models), sort_keys=True)


def browser_judgments():
    """The report judge's records, those of every judge it is compared with, and the benchmark's (show_in_browser)."""
    return [path for judge in PLAN.reported_judges() for path in judgments(judge)] + _BROWSER_SHOWS["judgments"]


def judge_config(wildcards):
    return PLAN.judge_config(PLAN.judge_spec(wildcards.judge))


def judge_upstream(wildcards):
    """What the judged responses were made from (the model's answer settings and the level's instance rows): a tracked
    param of the judge job, so a change reruns the judgment even where its responses file is gone (an interrupted
    re-inference: Snakemake rebuilds no deleted file whose downstream output is newer, snakemake/snakemake#1978)."""
    return stable_hash([model_config(wildcards), instances_digest(wildcards)], length=16)


def judge_run_config(wildcards):
    return PLAN.judge_run_config(PLAN.judge_spec(wildcards.judge))


def model_python(wildcards):
    """The interpreter of a model's inference job: its route's virtual environment (.envs/<name>/, `make envs`) where
    one is built and conda is not used; else `python` (conda's env, or the one that runs Snakemake). A string
    resource, untracked: which interpreter runs the job changes no answer the registry's `env` does not already track."""
    venv = PLAN.model_venv_python(wildcards.model)
    venv = Path(workflow.basedir) / venv if venv else None
    return str(venv) if venv and not USE_CONDA and venv.exists() else "python"


def model_env(wildcards):
    return str(Path(workflow.basedir) / PLAN.model_env(wildcards.model))


def model_resource(resource):
    """A per-model resource of an inference job, as the plan resolves it from the registry entry."""
    return lambda wildcards: getattr(PLAN, resource)(wildcards.model)


# ---------------------------------------------------------------------------------------------
# Curation (source virtuebench: rules/curation.smk)


def source_download(wildcards):
    return PLAN.source_download(wildcards.source)


def source_revision_option(wildcards):
    return PLAN.source_revision_option(wildcards.source)


def source_videos_dir(wildcards):
    return res(f"sources/{wildcards.source}/videos")


def curation_source_settings(wildcards):
    return PLAN.curation_source_settings(wildcards.source)


def filter_model_config(wildcards):
    """The filter model's answer settings (curation.filter_model): a tracked param of both filters that ask it."""
    return PLAN.model_config(PLAN.curation["filter_model"])


def filter_model_run_config(wildcards):
    return PLAN.model_run_config(PLAN.curation["filter_model"])


def difficulty_judge_config(wildcards):
    return PLAN.difficulty_judge_config()


def difficulty_judge_run_config(wildcards):
    return PLAN.difficulty_judge_run_config()


def single_frames_dir(wildcards):
    """The difficulty filter's folder of one random frame per question of the source."""
    return res(f"curation/{wildcards.source}/single_frames")


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
    return PLAN.frame_folders(items_for_level(kept_instances(), int(wildcards.level)), level=int(wildcards.level))


def supplement_frames(wildcards):
    """Frame folders of the supplement set's videos (once the sets exist)."""
    path = checkpoints.make_supplement_sets.get(source=wildcards.source).output[wildcards.form]
    return PLAN.frame_folders(_instances_at(path, os.path.getmtime(path)), f"supplement/frames/{wildcards.source}")


def supplement_video_path(wildcards):
    """The video of a supplement frame job, from that source's supplement candidates."""
    return _video_in(checkpoints.make_supplement_sets.get(source=wildcards.source).output.oe, wildcards.video_id)


def supplement_video_stamp(wildcards):
    return _stamp(supplement_video_path(wildcards))


def supplement_frames_options(wildcards):
    """The supplement frame job's options; LongVideoBench's with its subtitles: the length the release states."""
    options = PLAN.supplement_frames_options()
    if not PLAN.supplement_stated_durations(wildcards.source):
        return options
    table = checkpoints.make_supplement_sets.get(source=wildcards.source).output.oe
    durations = {inst.video_id: inst.duration_s for inst in _instances_at(table, os.path.getmtime(table))}
    return f"{options} --duration {durations[wildcards.video_id]!r}"


def supplement_convert_settings(wildcards):
    return PLAN.supplement_convert_settings(wildcards.source)


def supplement_subtitles_option(wildcards):
    return PLAN.supplement_subtitles_option(wildcards.source)


def supplement_pool(wildcards):
    return PLAN.supplement_pool(wildcards.source)


def supplement_prompt(wildcards):
    return PLAN.supplement_choices.prompt_of(wildcards.source, wildcards.form)


def supplement_videos_dir(wildcards):
    return res(f"supplement/{wildcards.source}/videos")


def supplement_sets_options(wildcards, input):
    """--pool (question_pool filtered) and LongVideoBench's --subtitles (longvideobench_subtitles: interleaved) in one
    param: the sets command's text stays as it was before subtitles existed (a changed command would remake every set,
    and every supplement inference job after it, which reads its set by date)."""
    return (f"--pool {input.pool}" if input.pool else "") + supplement_subtitles_option(wildcards)


def supplement_frames_dir(wildcards):
    return res(f"supplement/frames/{wildcards.source}")


def supplement_judge_name(wildcards):
    """The judge of a supplement judgments file: mcq (by letter), VideoEval-Pro's authors' grader, or the run's judge."""
    return PLAN.supplement_judge(wildcards.source, wildcards.form).name


def supplement_judge_config(wildcards):
    return PLAN.judge_config(PLAN.supplement_judge(wildcards.source, wildcards.form))


def supplement_judge_run_config(wildcards):
    return PLAN.judge_run_config(PLAN.supplement_judge(wildcards.source, wildcards.form))


# ---------------------------------------------------------------------------------------------
# The run lock and the start-up sweep (docs/reliability.md)

#: Rules whose outputs are made from the judgments (directly or through results/scores.csv or the browser); a
#: benchmark's rules file adds its own (add_report_rules).
_REPORT_RULES = list(REPORT_RULES)


def add_report_rules(*names):
    """Called by the benchmark's rules file: its rules whose outputs are made from the judgments, which the start-up
    sweep forces where one they were made from changed (docs/reliability.md)."""
    _REPORT_RULES.extend(names)


def report_outputs():
    """Every report output of this configuration: what the judgments are read into."""
    defined = {rule.name for rule in workflow.rules}
    outputs = [str(path) for name in _REPORT_RULES if name in defined for path in getattr(rules, name).output]
    outputs += [path for a, b in PLAN.checked.compare for path in expand(rules.compare_judges.output, a=a, b=b)]
    return outputs


def guard_run():
    """Before the DAG is built: a real run takes the results folder's run lock (one live run, even after `snakemake
    --unlock`), then every run checks the provenance chain of this configuration's results. What is stale is rebuilt:
    a real run removes the stale records (responses, judgments, frames folders: wrong data), and every run has
    Snakemake force the jobs of the stale report outputs, which stay in place until their jobs replace them (removed,
    they would be gone for as long as a failing job upstream keeps them from being rebuilt; kept but not forced, they
    would be "up to date" over a removed record: snakemake/snakemake#1978). Only the main process of a command-line
    run does this (not a cluster job, not --unlock, --list ...)."""
    mode = snakemake_mode()
    if not workflow.is_main_process or mode == "no-jobs":
        return
    if mode == "run":
        lock = Path(runlock.lock_path(PLAN.results)).resolve()  # absolute: Snakemake leaves --directory before the process exits
        try:
            holder, note = runlock.acquire(lock, PLAN.results)
        except runlock.RunLocked as error:
            sys.exit(f"virtuebench: {error}")
        atexit.register(runlock.release, lock, holder)  # at any exit of this process; kill -9 leaves a dead pid
        if note:
            print(f"virtuebench WARNING: {note}", file=sys.stderr)
        # A killed Snakemake's jobs may still write: found by the marker every job of a run inherits (this run's too).
        left = runlock.leftover_processes(Path(runlock.STATE_ROOT))
        os.environ[runlock.RUN_MARKER] = runlock.run_marker(lock, holder)
        others = [other for other in runlock.live_holders() if other != holder]
        if any(Path(".snakemake/locks").glob("*.lock")) and not others:  # Snakemake may stop on them: is unlocking safe?
            jobs, unknown = runlock.slurm_jobs(".")
            safe, advice = runlock.unlock_advice(left + jobs, unknown)
            if not safe:
                sys.exit(f"virtuebench: {advice}")
            print(f"virtuebench: {advice}", file=sys.stderr)
        elif mine := [job for job in left if job.lock == str(lock)]:  # unlocked, but a killed run's jobs still write here
            sys.exit(f"virtuebench: jobs of an earlier run in {PLAN.results}/ that was killed are {runlock.still_running(mine)} Then the same command again.")
    table = Path(res("instances.parquet"))
    if not table.exists():
        return
    listed = _instances_at(str(table), os.path.getmtime(table))
    remembered = verify.Remembered(verify.remembered_path(PLAN.results))  # checks that passed on the same files
    outputs = report_outputs()
    chain = verify.check_configuration(PLAN, outputs, remembered, listed)  # what `python -m virtuebench.verify` prints
    remembered.save()
    if not chain.problems:
        return
    outputs = set(outputs)
    kept = [path for path in chain.stale if path in outputs]
    records = [path for path in chain.stale if path not in outputs]
    # Forced files are also targets (as with --forcerun FILE): a run of one target rebuilds these too. Where Snakemake
    # cannot be told (not started as Snakemake 9 starts), they are removed, as before: rebuilt, if not kept.
    if kept and not runlock.force_files(kept):
        records, kept = records + kept, []
    given = " ".join(map(str, workflow.overwrite_configfiles or ()))
    where = f" (`python -m virtuebench.verify{f' --configfile {given}' if given else ''}` lists them)"
    problems = _few(map(str, chain.problems), listed=where)
    print(f"virtuebench WARNING: stale results ({len(chain.problems)} problem(s)), made from files that changed or are gone:\n  {problems}", file=sys.stderr)
    if records and mode == "run":
        verify.remove(records)
        print(f"virtuebench: removed {len(records)} stale record(s) ({_few(records, 3, ', ')}); this run rebuilds them", file=sys.stderr)
    elif records:
        print(
            f"virtuebench: a real run removes {len(records)} stale record(s) first ({_few(records, 3, ', ')}) and rebuilds them "
            "(their jobs are not in this dry run's plan)",
            file=sys.stderr,
        )
    if kept:
        print(
            f"virtuebench: {len(kept)} report output(s) made from them are rebuilt, and kept until their jobs replace them "
            f"({_few(kept, 3, ', ')})",
            file=sys.stderr,
        )


def report_lacks():
    """After a failed run (the Snakefile's onerror): what the report outputs kept from an earlier run do not show of
    this configuration's judgments, in a line or two (virtuebench.report.summary); None where nothing is lacking."""
    table = Path(res("instances.parquet"))
    if not table.exists():
        return None
    listed = _instances_at(str(table), os.path.getmtime(table))
    judged = PLAN.checked_judgments(listed)
    return summarize_outdated(report_outputs(), judged, res(verify.SCORES))


def _few(lines, shown=5, sep="\n  ", listed=""):
    """The first `shown` of `lines`, and how many more (`listed`: where the rest is listed)."""
    lines = list(lines)
    return sep.join(lines[:shown]) + (f"{sep}... and {len(lines) - shown} more{listed}" if len(lines) > shown else "")


def import_legacy_caches():
    """The verdicts of an older version's SQLite caches, read into the store once (the Snakefile's onstart): none is
    paid for again."""
    for legacy, root in PLAN.legacy_caches():
        if read := import_sqlite(legacy, Store(root, VERDICTS)):
            print(f"virtuebench: {read} verdicts of {legacy} read into the store {root}", file=sys.stderr)


# ---------------------------------------------------------------------------------------------
# The run's start and end (the Snakefile's onstart, onsuccess and onerror)


def on_start():
    """Before the first job of a real run (a dry run skips onstart): a missing API key stops the run; an older
    version's caches are read into the store; what the run will ask and cost is said (`make plan` for the whole table)."""
    if PLAN.checked.missing_keys:
        sys.exit("virtuebench: invalid configuration:\n  " + "\n  ".join(PLAN.checked.missing_keys))
    stop_on_environment_fault(import_legacy_caches)
    from virtuebench.estimate import summary as estimate_summary

    print("\n".join(estimate_summary(PLAN)), file=sys.stderr)


def on_success():
    """Items left out of the instances table, broken videos and failed items, and a report.zip of other results than
    these: said where the user looks."""
    for warning in (
        summarize_excluded(res("instances_excluded.csv")),
        summarize_invalid(res("invalid_items.csv")),
        summarize_report(res("report.zip")),
    ):
        if warning:
            print(f"virtuebench WARNING: {warning}", file=sys.stderr)


def on_error():
    """A failed or interrupted run still says what the instances table left out (the failed job's own error comes
    above), what the report kept from an earlier run lacks, and what was kept."""
    for warning in (summarize_excluded(res("instances_excluded.csv")), report_lacks()):
        if warning:
            print(f"virtuebench WARNING: {warning}", file=sys.stderr)
    print(
        "virtuebench: the run stopped before the end. Finished jobs are kept, and so are the finished items of an "
        "unfinished inference or judging job (beside its output, as .partial); rerun the same command to go on.",
        file=sys.stderr,
    )
