# virtuebench: does a video-language model answer honestly when the frames lack the evidence?
# Stages: sources -> frames -> inference -> judge -> report (docs/records.md for the formats). The configuration is
# checked and resolved into one plan in rules/common.smk; every rule reads its values from that plan (docs/workflow.md).
import sys
from pathlib import Path

from snakemake.utils import min_version

min_version("9.0")

sys.path.insert(0, str(Path(workflow.basedir) / "src"))


# The demo's settings, only where the user gives no --configfile of their own: Snakemake would merge this file under
# theirs (its source settings into another source's, say), and --config cannot remove a merged key.
if not workflow.overwrite_configfiles:

    configfile: "config/config.yaml"


# Snakemake's own report (`make report`: snakemake --report results/report.zip): this text, then the outputs marked
# report(...) in rules/, with their captions from report/.
report: "report/workflow.rst"


include: "rules/common.smk"  # the configuration checked, and the plan (PLAN) built from it
include: "rules/sources.smk"
include: "rules/frames.smk"
include: "rules/inference.smk"  # before the rules that `use rule run_inference`
include: "rules/curation.smk"
include: "rules/supplement.smk"
include: "rules/judge.smk"
include: PLAN.benchmark.rules  # its tables and figures: VirtueBench's rules/report.smk, CVRR-ES's rules/cvrr.smk
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
    on_start()


onsuccess:
    on_success()


onerror:
    on_error()
