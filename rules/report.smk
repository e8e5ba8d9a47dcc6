localrules:
    compute_scores,
    make_tables,
    make_fig4,
    make_fig6,
    compare_judges,


rule compute_scores:
    input:
        lambda wildcards: judgments(),
    output:
        scores="results/scores.csv",
        invalid="results/invalid_items.csv",
    log:
        "logs/scores.log",
    conda:
        "../envs/core.yaml"
    message:
        "Scoring {input}"
    shell:
        "python -m virtuebench.metrics {input} --out {output.scores} --invalid-out {output.invalid} > {log} 2>&1"


rule make_tables:
    input:
        scores=rules.compute_scores.output.scores,
    output:
        table1="results/table1.tex",
        table2="results/table2.tex",
    params:
        models=config["models"],
        levels=config["levels"],
        prompt=config["report"]["prompt"],
        judge=JUDGE,
    log:
        "logs/tables.log",
    conda:
        "../envs/core.yaml"
    message:
        "Writing Tables 1 and 2"
    shell:
        "python -m virtuebench.report tables --scores {input.scores} --models {params.models} "
        "--levels {params.levels} --prompt {params.prompt} --judge {params.judge} "
        "--table1 {output.table1} --table2 {output.table2} > {log} 2>&1"


rule make_fig4:
    input:
        instances=rules.make_instances.output.instances,
    output:
        png="results/fig4.png",
        csv="results/fig4.csv",
    params:
        levels=config["levels"],
    log:
        "logs/fig4.log",
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
    output:
        png="results/fig6.png",
        csv="results/fig6.csv",
    params:
        models=config["models"],
        prompts=config["prompts"],
        judge=JUDGE,
    log:
        "logs/fig6.log",
    conda:
        "../envs/core.yaml"
    message:
        "Drawing Fig. 6 (refusal accuracy with and without the honesty instruction)"
    shell:
        "python -m virtuebench.report fig6 --scores {input.scores} --models {params.models} "
        "--prompts {params.prompts} --judge {params.judge} --out {output.png} --csv {output.csv} > {log} 2>&1"
