# One model answering one set of instances: run_inference is also the template of the other inference
# jobs (draft_reference_answers in rules/curation.smk, run_supplement_inference in rules/supplement.smk),
# which take its GPU resources, conda env and command with `use rule run_inference as ... with:` and
# set their own input, output, params.prompt, params.level, log and message.
rule run_inference:
    input:
        # ancient: the job tracks the rows it asks (params.rows), not when the table was written; str(): ancient()
        # flags its argument in place, and that object is make_instances' own output
        instances=ancient(str(rules.make_instances.output.instances)),
        # by date: see frames_for_level in rules/common.smk
        frames=frames_for_level,
    output:
        res("responses/{model}/{prompt}/{level}.jsonl"),
    params:
        # the rows it asks and what their frames are made from (asked_digest); the rules built on this one set their own
        rows=asked_digest,
        model_config=model_config,
        frames_dir=res("frames"),
        prompt=inference_prompt,  # the name, and for DSCP the context step's scope (config.dscp_context)
        level="{level}",
    log:
        logpath("responses/{model}/{prompt}/{level}.log"),
    resources:
        gpu=model_resource("gpus"),
        cpus_per_gpu=model_resource("cpus_per_gpu"),
        mem_mb=model_resource("mem_mb"),
        runtime=model_resource("runtime"),
        slurm_partition=model_resource("gpu_partition"),
        run_config=model_run_config,
        python=model_python,  # a resource, not a param: building the venv (`make envs`) reruns nothing
        # a resource, not a param: the store keeps answers under keys of all they depend on, wherever it is
        store=PLAN.store,
    conda:
        model_env
    message:
        "Asking {wildcards.model} with prompt {wildcards.prompt} at {wildcards.level} frames"
    shell:
        "{resources.python} -m virtuebench.inference --instances {input.instances} --frames-dir {params.frames_dir} "
        "--model {wildcards.model} --model-config {params.model_config:q} --model-run-config {resources.run_config:q} "
        "--prompt {params.prompt} --store {resources.store:q} "
        "--level {params.level} --out {output} > {log} 2>&1"
