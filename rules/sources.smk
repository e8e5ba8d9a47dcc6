localrules:
    make_instances,


# The instances table: built by the source's adapter, or (source virtuebench) imported from the verified annotations
# of the curated questions (docs/annotation.md). One checkpoint; its inputs, extra outputs, params and command are the
# plan's for this source (virtuebench.plan.Plan.instances_step).
INSTANCES_STEP = PLAN.instances_step()


checkpoint make_instances:
    input:
        **INSTANCES_STEP.inputs,
    output:
        instances=res("instances.parquet"),
        excluded=res("instances_excluded.csv"),
        **INSTANCES_STEP.files,
        **{name: directory(path) for name, path in INSTANCES_STEP.folders.items()},
    params:
        **INSTANCES_STEP.params,
    log:
        logpath("make_instances.log"),
    threads: INSTANCES_STEP.threads
    conda:
        "../envs/core.yaml"
    message:
        INSTANCES_STEP.message
    shell:
        INSTANCES_STEP.command
