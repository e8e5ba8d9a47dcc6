# The per-item results browser, of either benchmark (docs/browser.md).
import os


localrules:
    make_browser,
    link_browser,


rule make_browser:
    input:
        instances=rules.make_instances.output.instances,
        frames=lambda wildcards: browser_frames(),
        judgments=lambda wildcards: browser_judgments(),
        scores=browser_scores,
        comparisons=browser_comparisons,
    output:
        res("browser/index.html"),
    params:
        out_dir=lambda wildcards, output: os.path.dirname(output[0]),
        thumb_width=PLAN.report["thumb_width"],
        results=lambda wildcards, input: os.path.dirname(input.instances),
        frames_dir=lambda wildcards, input: os.path.join(os.path.dirname(input.instances), "frames"),
        models=PLAN.models,
        prompts=PLAN.prompts,
        benchmark=PLAN.benchmark.name,
        scores=lambda wildcards, input: f"--scores {input.scores}" if input.scores else "",
        comparisons=lambda wildcards, input: f"--comparisons {input.comparisons}" if input.comparisons else "",
        options=browser_options(),
        trust=PLAN.report["trust"],
        bootstrap=PLAN.report["bootstrap"],
        invalid=PLAN.report["invalid"],  # how a judge not in scores.csv is scored (report.invalid, report.categories)
        categories=PLAN.categories(),
    resources:
        legend=browser_legend(),  # the registry's words on the models: a description edit reruns nothing
    log:
        logpath("browser.log"),
    conda:
        "../envs/core.yaml"
    message:
        "Writing the per-item results browser (open {output})"
    shell:
        "python -m virtuebench.browser {input.judgments} --chain-root {params.results} --instances {input.instances} --frames-dir {params.frames_dir} "
        "--out {params.out_dir} --thumb-width {params.thumb_width} --models {params.models} --prompts {params.prompts} "
        "--benchmark {params.benchmark} {params.scores} {params.comparisons} {params.options} --legend {resources.legend:q} "
        "--trust-scheme {params.trust[scheme]} --confidence-target {params.trust[confidence_target]} "
        "--wrong-answer {params.trust[wrong_answer]} --unwarranted-refusal {params.trust[unwarranted_refusal]} "
        "--resamples {params.bootstrap[resamples]} --seed {params.bootstrap[seed]} --invalid {params.invalid} "
        "--categories {params.categories:q} > {log} 2>&1"


# Snakemake's report takes a site only as a folder output; make_browser's output is its index.html (its contact sheets
# stay from run to run beside it), so the report gets a folder of hard links to it (`make report`).
rule link_browser:
    input:
        rules.make_browser.output[0],
    output:
        report(directory(res("report/browser")), htmlindex="index.html", caption="../report/browser.rst", category="Per-item results"),
    params:
        site=lambda wildcards, input: os.path.dirname(input[0]),
    log:
        logpath("report/browser.log"),
    conda:
        "../envs/core.yaml"
    message:
        "Linking the results browser into {output} for Snakemake's report (hard links: no second copy)"
    shell:
        "python -m virtuebench.report link-folder --source {params.site} --out {output} > {log} 2>&1"
