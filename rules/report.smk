# VirtueBench's scores, paired comparisons, tables and figures from the judgments (the Snakefile includes this file for
# benchmark: virtuebench).
import os


localrules:
    compute_scores,
    compare_arms,
    make_tables,
    make_paper_vs_run,
    make_fig4,
    make_fig6,
    make_fig_levels,
    make_counts_figure,
    compare_judges,


rule compute_scores:
    input:
        lambda wildcards: judgments(),
    output:
        scores=report(res("scores.csv"), caption="../report/scores.rst", category="Numbers"),
        invalid=res("invalid_items.csv"),
    params:
        method=PLAN.scores_method,  # a new scoring method scores the judgments again
        resamples=PLAN.report["bootstrap"]["resamples"],
        seed=PLAN.report["bootstrap"]["seed"],
        trust_scheme=PLAN.report["trust"]["scheme"],
        confidence_target=PLAN.report["trust"]["confidence_target"],
        wrong_answer=PLAN.report["trust"]["wrong_answer"],
        unwarranted_refusal=PLAN.report["trust"]["unwarranted_refusal"],
        invalid=PLAN.report["invalid"],
        categories=PLAN.categories(),
        judge=PLAN.judge,
        results=lambda wildcards, output: os.path.dirname(output.scores),  # the results folder
        resample_cache=lambda wildcards, output: os.path.join(os.path.dirname(output.scores), "cache", "resamples"),
    log:
        logpath("scores.log"),
    conda:
        "../envs/core.yaml"
    message:
        "Scoring {input} (intervals: {params.resamples} bootstrap resamples over videos)"
    shell:
        "python -m virtuebench.metrics {input} --chain-root {params.results} --out {output.scores} --invalid-out {output.invalid} "
        "--resamples {params.resamples} --seed {params.seed} --resample-cache {params.resample_cache} --trust-scheme {params.trust_scheme} "
        "--confidence-target {params.confidence_target} --wrong-answer {params.wrong_answer} "
        "--unwarranted-refusal {params.unwarranted_refusal} --invalid {params.invalid} --categories {params.categories:q} "
        "--judge {params.judge} > {log} 2>&1"


show_in_browser(scores=[rules.compute_scores.output.scores])  # the browser shows its intervals and trust scores


rule compare_arms:
    input:
        lambda wildcards: judgments(),
    output:
        report(res("comparisons.csv"), caption="../report/comparisons.rst", category="Numbers"),
    params:
        models=PLAN.models,
        prompts=PLAN.prompts,
        prompt=PLAN.report["prompt"],
        judge=PLAN.judge,
        pairs=PLAN.compare_pairs_option(),
        method=PLAN.comparisons_method,  # a new method makes the comparisons again
        resamples=PLAN.report["bootstrap"]["resamples"],
        seed=PLAN.report["bootstrap"]["seed"],
        holm_family=PLAN.report["holm_family"],
        holm_tarone=PLAN.holm_tarone_option(),
        p_value=PLAN.report["p_value"],
        results=lambda wildcards, output: os.path.dirname(output[0]),
        resample_cache=lambda wildcards, output: os.path.join(os.path.dirname(output[0]), "cache", "resamples"),  # shared with scores
    log:
        logpath("comparisons.log"),
    conda:
        "../envs/core.yaml"
    message:
        "Paired comparisons: prompts per model, adjacent models in Table 2, report.compare"
    shell:
        "python -m virtuebench.comparisons {input} --chain-root {params.results} --models {params.models} --prompts {params.prompts} "
        "--prompt {params.prompt} --judge {params.judge} {params.pairs} --resamples {params.resamples} "
        "--seed {params.seed} --resample-cache {params.resample_cache} --holm-family {params.holm_family} {params.holm_tarone} --p-value {params.p_value} "
        "--out {output} > {log} 2>&1"


show_in_browser(comparisons=[rules.compare_arms.output[0]])  # the browser shows its differences and intervals


rule make_tables:
    input:
        scores=rules.compute_scores.output.scores,
    output:
        table1=report(res("table1.tex"), caption="../report/table1.rst", category="Tables", subcategory="VirtueBench"),
        table2=report(res("table2.tex"), caption="../report/table2.rst", category="Tables", subcategory="VirtueBench"),
        trust=report(res("table2_trust.tex"), caption="../report/table2_trust.rst", category="Tables", subcategory="VirtueBench"),
        # the same tables as pages: the report shows an HTML result, and only offers a .tex for download
        table1_html=report(res("table1.html"), caption="../report/table1.rst", category="Tables", subcategory="VirtueBench"),
        table2_html=report(res("table2.html"), caption="../report/table2.rst", category="Tables", subcategory="VirtueBench"),
        trust_html=report(res("table2_trust.html"), caption="../report/table2_trust.rst", category="Tables", subcategory="VirtueBench"),
    params:
        models=PLAN.models,
        levels=PLAN.levels,
        prompt=PLAN.report["prompt"],
        judge=PLAN.judge,
        intervals=PLAN.intervals_option(),
        trust_scheme=PLAN.report["trust"]["scheme"],
        confidence_target=PLAN.report["trust"]["confidence_target"],
        wrong_answer=PLAN.report["trust"]["wrong_answer"],
        unwarranted_refusal=PLAN.report["trust"]["unwarranted_refusal"],
        invalid=PLAN.report["invalid"],  # report.invalid and report.categories, stated in the captions
        categories=PLAN.categories(),
        # The models' named registry choices in effect (config.model_choices), stated in the captions ("" where none).
        model_choices=PLAN.choices_option(PLAN.models),
        # The reported judge's open decisions (reasoning, truncated, forbidden_pairs) at the values in effect, likewise.
        judge_options=PLAN.judge_options(PLAN.judge),
    log:
        logpath("tables.log"),
    conda:
        "../envs/core.yaml"
    message:
        "Writing Tables 1 and 2 (LaTeX, and HTML pages for the report)"
    shell:
        "python -m virtuebench.report tables --scores {input.scores} --models {params.models} "
        "--levels {params.levels} --prompt {params.prompt} --judge {params.judge} "
        "--table1 {output.table1} --table2 {output.table2} --table2-trust {output.trust} {params.intervals} "
        "--table1-html {output.table1_html} --table2-html {output.table2_html} --table2-trust-html {output.trust_html} "
        "--trust-scheme {params.trust_scheme} --confidence-target {params.confidence_target} "
        "--wrong-answer {params.wrong_answer} --unwarranted-refusal {params.unwarranted_refusal} "
        "--invalid {params.invalid} --categories {params.categories:q} {params.model_choices} {params.judge_options} > {log} 2>&1"


rule make_paper_vs_run:
    input:
        scores=rules.compute_scores.output.scores,
    output:
        csv=res("paper_vs_run.csv"),
        tex=report(res("paper_vs_run.tex"), caption="../report/paper_vs_run.rst", category="Tables", subcategory="VirtueBench"),
        html=report(res("paper_vs_run.html"), caption="../report/paper_vs_run.rst", category="Tables", subcategory="VirtueBench"),
    params:
        models=PLAN.models,
        levels=PLAN.levels,
        prompt=PLAN.paper_prompt,  # the paper's Tables 1 and 2 are of the honesty prompt
        judge=PLAN.judge,
        # run model -> the paper's row (report.paper_names, and the models named as the paper names them)
        paper_names=PLAN.paper_names_option(),
    log:
        logpath("paper_vs_run.log"),
    conda:
        "../envs/core.yaml"
    message:
        "Putting the paper's Tables 1 and 2 beside the run's numbers and intervals"
    shell:
        "python -m virtuebench.report paper-vs-run --scores {input.scores} --models {params.models} "
        "--levels {params.levels} --prompt {params.prompt} --judge {params.judge} {params.paper_names} "
        "--csv {output.csv} --tex {output.tex} --html {output.html} > {log} 2>&1"


rule make_fig4:
    input:
        instances=rules.make_instances.output.instances,
    output:
        png=report(res("fig4.png"), caption="../report/fig4.rst", category="Figures", subcategory="VirtueBench"),
        csv=res("fig4.csv"),
    params:
        levels=PLAN.levels,
    log:
        logpath("fig4.log"),
    conda:
        "../envs/core.yaml"
    message:
        "Drawing Fig. 4 (unanswerability by level and by instance)"
    shell:
        "python -m virtuebench.report fig4 --instances {input.instances} --levels {params.levels} "
        "--out {output.png} --csv {output.csv} > {log} 2>&1"


rule make_fig6:
    input:
        scores=rules.compute_scores.output.scores,
        comparisons=rules.compare_arms.output[0],
    output:
        png=report(res("fig6.png"), caption="../report/fig6.rst", category="Figures", subcategory="VirtueBench"),
        csv=res("fig6.csv"),
    params:
        models=PLAN.models,
        prompts=PLAN.prompts,
        judge=PLAN.judge,
        fig6_levels=PLAN.report["fig6_levels"],
        invalid=PLAN.report["invalid"],
    log:
        logpath("fig6.log"),
    conda:
        "../envs/core.yaml"
    message:
        "Drawing Fig. 6 (refusal accuracy with and without the honesty instruction)"
    shell:
        "python -m virtuebench.report fig6 --scores {input.scores} --comparisons {input.comparisons} "
        "--models {params.models} --prompts {params.prompts} --judge {params.judge} --pooled-levels {params.fig6_levels} "
        "--invalid {params.invalid} --out {output.png} --csv {output.csv} > {log} 2>&1"


rule make_fig_levels:
    input:
        scores=rules.compute_scores.output.scores,
    output:
        png=report(res("fig_levels.png"), caption="../report/fig_levels.rst", category="Figures", subcategory="VirtueBench"),
        csv=res("fig_levels.csv"),
    params:
        models=PLAN.models,
        levels=PLAN.levels,
        prompt=PLAN.report["prompt"],
        judge=PLAN.judge,
    log:
        logpath("fig_levels.log"),
    conda:
        "../envs/core.yaml"
    message:
        "Drawing accuracy against frames per model (overall, non-refusal, refusal; trust score)"
    shell:
        "python -m virtuebench.report levels --scores {input.scores} --models {params.models} "
        "--levels {params.levels} --prompt {params.prompt} --judge {params.judge} "
        "--out {output.png} --csv {output.csv} > {log} 2>&1"


rule make_counts_figure:
    input:
        instances=rules.make_instances.output.instances,
    output:
        png=report(res("{figure}.png"), caption="../report/counts_figure.rst", category="Figures", subcategory="VirtueBench"),
        csv=res("{figure}.csv"),
    wildcard_constraints:
        figure="fig3_composition|supplement/fig1_sources",
    params:
        kind=lambda wildcards: "composition" if wildcards.figure == "fig3_composition" else "sources",
    log:
        logpath("{figure}.log"),
    conda:
        "../envs/core.yaml"
    message:
        "Drawing {output.png} from the instances table"
    shell:
        "python -m virtuebench.report {params.kind} --instances {input.instances} --out {output.png} --csv {output.csv} > {log} 2>&1"
