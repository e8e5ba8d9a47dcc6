rule run_inference:
    input:
        instances=rules.make_instances.output.instances,
        frames=frames_for_level,
    output:
        "results/responses/{model}/{prompt}/{level}.jsonl",
    params:
        model_config=model_config,
        frames_dir="results/frames",
    log:
        "logs/responses/{model}/{prompt}/{level}.log",
    resources:
        gpu=model_resource("gpus", 0),
        cpus_per_gpu=model_cpus_per_gpu,
        mem_mb=model_mem_mb,
        runtime=model_resource("runtime_min", 60),
        slurm_partition=gpu_partition,
    conda:
        model_env
    message:
        "Asking {wildcards.model} with prompt {wildcards.prompt} at {wildcards.level} frames"
    shell:
        "python -m virtuebench.inference --instances {input.instances} --frames-dir {params.frames_dir} "
        "--model {wildcards.model} --model-config {params.model_config:q} --prompt {wildcards.prompt} "
        "--level {wildcards.level} --out {output} > {log} 2>&1"
