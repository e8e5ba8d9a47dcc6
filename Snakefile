# virtuebench: does a video-language model answer honestly when the frames lack the evidence?
# Stages: sources -> frames -> inference -> judge -> report (docs/records.md for the formats).
import sys
from pathlib import Path

from snakemake.utils import min_version, validate

min_version("9.0")

sys.path.insert(0, str(Path(workflow.basedir) / "src"))
from virtuebench.benchmarks import benchmark  # noqa: E402
from virtuebench.config import ConfigError, check_config, start_warnings  # noqa: E402
from virtuebench.plan import EmptyResult, Plan  # noqa: E402
from virtuebench.report.summary import summarize_excluded, summarize_invalid  # noqa: E402
from virtuebench.report.packed import summarize_report  # noqa: E402
from virtuebench.support.faults import stop_on_environment_fault  # noqa: E402
from virtuebench.support.runlock import STATE_ROOT, probe_writable, snakemake_mode  # noqa: E402


# The workflow's records and Snakemake's log are under .snakemake: a full or unwritable one stops here, in one line.
if workflow.is_main_process and snakemake_mode() != "no-jobs":
    stop_on_environment_fault(lambda: probe_writable(STATE_ROOT))


# The demo's settings, only where the user gives no --configfile of their own: Snakemake would merge this file under
# theirs (its source settings into another source's, say), and --config cannot remove a merged key.
if not workflow.overwrite_configfiles:

    configfile: "config/config.yaml"


# Snakemake's own report (`make report`: snakemake --report results/report.zip): this text, then the outputs marked
# report(...) in rules/, with their captions from report/.
report: "report/workflow.rst"


# The schemas (and each setting's rerun class, x-rerun) beside this Snakefile, whichever virtuebench is imported.
CONFIG_DIR = Path(workflow.basedir) / "config"
try:
    CHECKED = check_config(config, CONFIG_DIR, base_dir=".", defer_keys=True)
except ConfigError as error:
    sys.exit(f"virtuebench: {error}")
validate(config, "config/schema.yaml")
# A dry run needs no API key, but names each one a real run would stop on (onstart).
for warning in start_warnings(CHECKED, runs_jobs=snakemake_mode() == "run"):
    print(f"virtuebench WARNING: {warning}", file=sys.stderr)
# The plan: every question the rules ask (targets, levels, resources, frame options, the judge per table), answered
# once from the checked config (virtuebench.plan); rules/common.smk adapts Snakemake's wildcards to it.
PLAN = Plan.build(config, CHECKED, CONFIG_DIR)
# An empty result is an error: a source, level or model that yields no item stops the run here where the config tells
# (the synthetic demo's items, a CVRR-ES folder without its annotations), else once the table is read (rules/common.smk).
if workflow.is_main_process and snakemake_mode() != "no-jobs":
    try:
        PREVIEW = PLAN.preview()
        if PREVIEW is not None and (EMPTY := PLAN.empty_results(PREVIEW)):
            raise EmptyResult(EMPTY, f"source {config['source']['name']} (planned from its settings)")
    except ValueError as error:
        sys.exit(f"virtuebench: {error}")
MODELS, JUDGE = CHECKED.models, CHECKED.judge
# The benchmark whose tables the default target builds: its rules file, targets and settings (virtuebench.benchmarks).
BENCHMARK = benchmark(config["benchmark"])
# Source virtuebench: the benchmark is curated from the real sources (rules/curation.smk).
CURATED = PLAN.curated
# validate() filled the schema's defaults: read config keys that have one directly.
CURATION, SUPPLEMENT = config["curation"], config["supplement"]
CURATION_SOURCES, SUPPLEMENT_SOURCES = PLAN.curation_sources, PLAN.supplement_sources


include: "rules/common.smk"
include: "rules/sources.smk"
include: "rules/frames.smk"
include: "rules/inference.smk"  # before the rules that `use rule run_inference`
include: "rules/curation.smk"
include: "rules/supplement.smk"
include: "rules/judge.smk"
include: BENCHMARK.rules  # its tables and figures: VirtueBench's rules/report.smk, CVRR-ES's rules/cvrr.smk
include: "rules/browser.smk"


# The run lock and the start-up sweep of stale results (rules/common.smk, docs/reliability.md).
stop_on_environment_fault(guard_run)


rule all:
    input:
        PLAN.default_targets(),
        rules.link_browser.output,
        PLAN.agreement_targets(),
    default_target: True


onstart:
    # A missing API key stops the run before the first job; a dry run (which skips onstart) needs none.
    if CHECKED.missing_keys:
        sys.exit("virtuebench: invalid configuration:\n  " + "\n  ".join(CHECKED.missing_keys))
    stop_on_environment_fault(import_legacy_caches)
    # What the run will ask and cost (`make plan` for the whole table): a real run only, once, before the first job.
    from virtuebench.estimate import summary as estimate_summary

    print("\n".join(estimate_summary(PLAN)), file=sys.stderr)


onsuccess:
    # Items left out of the instances table, broken videos and failed items, and a report.zip of other results than
    # these: say so where the user looks.
    for warning in (
        summarize_excluded(res("instances_excluded.csv")),
        summarize_invalid(res("invalid_items.csv")),
        summarize_report(res("report.zip")),
    ):
        if warning:
            print(f"virtuebench WARNING: {warning}", file=sys.stderr)


onerror:
    # A failed or interrupted run still says what the instances table left out (the failed job's own error comes above),
    # what the report kept from an earlier run lacks, and what was kept.
    for warning in (summarize_excluded(res("instances_excluded.csv")), report_lacks()):
        if warning:
            print(f"virtuebench WARNING: {warning}", file=sys.stderr)
    print(
        "virtuebench: the run stopped before the end. Finished jobs are kept, and so are the finished items of an "
        "unfinished inference or judging job (beside its output, as .partial); rerun the same command to go on.",
        file=sys.stderr,
    )
