localrules:
    make_instances,


checkpoint make_instances:
    output:
        instances="results/instances.parquet",
        excluded="results/instances_excluded.csv",
        videos=directory("results/videos"),
    params:
        source=config["source"]["name"],
        settings=source_settings,
    log:
        "logs/make_instances.log",
    threads: 2
    conda:
        "../envs/core.yaml"
    message:
        "Building the instances table from source {params.source}"
    shell:
        "python -m virtuebench.sources {params.source} --settings {params.settings:q} "
        "--videos-dir {output.videos} --out {output.instances} --excluded {output.excluded} --threads {threads} > {log} 2>&1"
