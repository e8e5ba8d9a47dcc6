# CVRR-ES's tables and figures (the Snakefile includes this file for benchmark: cvrr; virtuebench.cvrr.benchmark):
# Tables 2 and 3 and Figs. 1 and 4 from this run's judgments and, with config.cvrr.published_dir, the authors' published
# judge outputs beside them (docs/cvrr.md).

import os
import sys

from virtuebench.cvrr.benchmark import PublishedDirError, published_folder

CVRR = PLAN.benchmark_settings()
# The authors' judge outputs (a folder of the user's, checked here; or downloaded into the results folder by a job of
# the plan), imported as Judgment records: the tables pool them with this run's judgments, and the browser shows them
# beside the runs' own.
try:
    CVRR_PUBLISHED = published_folder(CVRR, res("published"))
except PublishedDirError as error:
    sys.exit(f"virtuebench: {error}")
CVRR_PUBLISHED_JUDGMENTS = [res("published_judgments.jsonl")] if CVRR_PUBLISHED else []
# The browser shows the published judgments, and counts an empty prediction as Table 2 does.
show_in_browser(judgments=CVRR_PUBLISHED_JUDGMENTS, options=["--empty-predictions", CVRR.empty_predictions])
# Made from the judgments: the start-up sweep forces their jobs when one they were made from changed (docs/reliability.md).
add_report_rules("make_cvrr_tables", "make_cvrr_figures")


localrules:
    import_cvrr_published,
    make_cvrr_tables,
    make_cvrr_figures,


rule download_cvrr_published:
    output:
        directory(res("published")),
    params:
        commit=CVRR.published_commit,
    log:
        logpath("cvrr/download.log"),
    conda:
        "../envs/core.yaml"
    message:
        "Downloading the CVRR-ES authors' published judge outputs (commit {params.commit})"
    shell:
        "python -m virtuebench.cvrr download --commit {params.commit} --out {output} > {log} 2>&1"


rule import_cvrr_published:
    input:
        lambda wildcards: CVRR_PUBLISHED,
    output:
        res("published_judgments.jsonl"),
    log:
        logpath("cvrr/import.log"),
    conda:
        "../envs/core.yaml"
    message:
        "Importing the published CVRR-ES judge outputs from {input}"
    shell:
        "python -m virtuebench.cvrr import {input} --out {output} > {log} 2>&1"


rule make_cvrr_tables:
    input:
        # Two inputs: the run's judgments wait on the instances checkpoint, the published ones do not, so a dry run
        # plans their import (and download) before the checkpoint has run.
        judgments=lambda wildcards: judgments(),
        published=CVRR_PUBLISHED_JUDGMENTS,
    output:
        table2=report(res("table2.tex"), caption="../report/cvrr_table2.rst", category="Tables", subcategory="CVRR-ES"),
        table2_csv=res("table2.csv"),
        table3=report(res("table3.tex"), caption="../report/cvrr_table3.rst", category="Tables", subcategory="CVRR-ES"),
        table3_csv=res("table3.csv"),
        # the same tables as pages: the report shows an HTML result, and only offers a .tex for download
        table2_html=report(res("table2.html"), caption="../report/cvrr_table2.rst", category="Tables", subcategory="CVRR-ES"),
        table3_html=report(res("table3.html"), caption="../report/cvrr_table3.rst", category="Tables", subcategory="CVRR-ES"),
        scores=res("scores.csv"),
    params:
        out_dir=lambda wildcards, output: os.path.dirname(output.table2),
        empty=CVRR.empty_predictions,
        # the captions' options in effect (frames per model, DSCP's step 1, the judge's temperature): switching one rewrites them
        options=PLAN.cvrr_options_note(),
        # The published judgments pooled are an import of the release folder as it is now (checked before writing).
        published=f"--published-from {CVRR_PUBLISHED} {CVRR_PUBLISHED_JUDGMENTS[0]}" if CVRR_PUBLISHED else "",
    log:
        logpath("cvrr/tables.log"),
    conda:
        "../envs/core.yaml"
    message:
        "Writing the CVRR-ES Tables 2 and 3"
    shell:
        "python -m virtuebench.cvrr tables {input} --out {params.out_dir} --empty-predictions {params.empty} --options {params.options:q} {params.published} > {log} 2>&1"


rule make_cvrr_figures:
    input:
        rules.make_cvrr_tables.output.table2_csv,
    output:
        fig1=report(res("fig1.png"), caption="../report/cvrr_fig1.rst", category="Figures", subcategory="CVRR-ES"),
        fig1_csv=res("fig1.csv"),
        fig4=report(res("fig4_dscp_gains.png"), caption="../report/cvrr_fig4.rst", category="Figures", subcategory="CVRR-ES"),
        fig4_csv=res("fig4_dscp_gains.csv"),
    params:
        out_dir=lambda wildcards, output: os.path.dirname(output.fig1),
    log:
        logpath("cvrr/figures.log"),
    conda:
        "../envs/core.yaml"
    message:
        "Drawing CVRR-ES Fig. 1 (averages) and Fig. 4 (DSCP gains)"
    shell:
        "python -m virtuebench.cvrr figures {input} --out {params.out_dir} > {log} 2>&1"
