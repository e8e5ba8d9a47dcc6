localrules:
    import_cvrr_published,
    make_cvrr_tables,
    make_cvrr_figures,


rule download_cvrr_published:
    output:
        directory(cvrr_path("published")),
    params:
        commit=config["cvrr"]["published_commit"],
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
        lambda wildcards: cvrr_published_dir(),
    output:
        cvrr_path("published_judgments.jsonl"),
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
        cvrr_table_inputs,
    output:
        table2=cvrr_path("table2.tex"),
        table2_csv=cvrr_path("table2.csv"),
        table3=cvrr_path("table3.tex"),
        table3_csv=cvrr_path("table3.csv"),
        scores=cvrr_path("scores.csv"),
    params:
        out_dir=lambda wildcards, output: os.path.dirname(output.table2),
        empty=config["cvrr"]["empty_predictions"],
    log:
        logpath("cvrr/tables.log"),
    conda:
        "../envs/core.yaml"
    message:
        "Writing the CVRR-ES Tables 2 and 3"
    shell:
        "python -m virtuebench.cvrr tables {input} --out {params.out_dir} --empty-predictions {params.empty} > {log} 2>&1"


rule make_cvrr_figures:
    input:
        rules.make_cvrr_tables.output.table2_csv,
    output:
        fig1=cvrr_path("fig1.png"),
        fig1_csv=cvrr_path("fig1.csv"),
        fig4=cvrr_path("fig4_dscp_gains.png"),
        fig4_csv=cvrr_path("fig4_dscp_gains.csv"),
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
