rule judge_responses:
    input:
        responses=rules.run_inference.output[0],
        instances=rules.make_instances.output.instances,
    output:
        "results/judgments/{judge}/{model}/{prompt}/{level}.jsonl",
    log:
        "logs/judgments/{judge}/{model}/{prompt}/{level}.log",
    conda:
        "../envs/core.yaml"
    message:
        "Judging {wildcards.model}/{wildcards.prompt}/{wildcards.level} with {wildcards.judge}"
    shell:
        "python -m virtuebench.judge {input.responses} --instances {input.instances} "
        "--judge {wildcards.judge} --out {output} > {log} 2>&1"
