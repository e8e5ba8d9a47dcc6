# Judging is light (rules) or network-bound (an LLM API, which compute nodes often cannot reach): local.
localrules:
    judge_responses,


rule judge_responses:
    input:
        responses=rules.run_inference.output[0],
        instances=rules.make_instances.output.instances,
    output:
        res("judgments/{judge}/{model}/{prompt}/{level}.jsonl"),
    params:
        judge_config=judge_config,
        upstream=judge_upstream,
        cache=PLAN.judge_cache,
    resources:
        run_config=judge_run_config,
    log:
        logpath("judgments/{judge}/{model}/{prompt}/{level}.log"),
    conda:
        "../envs/core.yaml"
    message:
        "Judging {wildcards.model}/{wildcards.prompt}/{wildcards.level} with {wildcards.judge}"
    shell:
        "python -m virtuebench.judge {input.responses} --instances {input.instances} "
        "--judge {wildcards.judge} --judge-config {params.judge_config:q} --judge-run-config {resources.run_config:q} "
        "--cache {params.cache} --out {output} > {log} 2>&1"


rule compare_judges:
    input:
        a=lambda wildcards: judgments(wildcards.a),
        b=lambda wildcards: judgments(wildcards.b),
    output:
        summary=res("judge_agreement/{a}__vs__{b}.json"),
        disagreements=res("judge_agreement/{a}__vs__{b}.disagreements.jsonl"),
    log:
        logpath("judge_agreement/{a}__vs__{b}.log"),
    conda:
        "../envs/core.yaml"
    message:
        "Measuring agreement of judges {wildcards.a} and {wildcards.b}"
    shell:
        "python -m virtuebench.judge agree --a {input.a} --b {input.b} --out {output.summary} "
        "--disagreements {output.disagreements} > {log} 2>&1"
