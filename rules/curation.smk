# Building VirtueBench from the six public benchmarks (seed 001, section 3.2; config source: virtuebench):
# download -> convert (MCQ -> open-ended) -> three filters -> per-level reference answers -> annotation
# batches; verified annotations come back through make_instances (rules/sources.smk).
# Filters and drafts call APIs, which compute nodes often cannot reach: they run locally.
localrules:
    download_source,
    collect_candidates,
    filter_answer_length,
    filter_answerability,
    filter_difficulty,
    merge_kept,
    export_annotation,
    make_stats,


rule download_source:
    output:
        "results/sources/{source}/raw/download.json",
    params:
        out_dir=lambda wildcards, output: os.path.dirname(output[0]),
        revision=lambda wildcards: source_revision_option(wildcards.source),
        verify=CURATION.get("verify", "size"),
    log:
        "logs/sources/{source}/download.log",
    conda:
        "../envs/core.yaml"
    message:
        "Downloading the {wildcards.source} release from the Hugging Face hub"
    shell:
        "python -m virtuebench.sources.download {wildcards.source} --out {params.out_dir} "
        "--verify {params.verify} {params.revision} > {log} 2>&1"


rule convert_source:
    input:
        source_download,
    output:
        candidates="results/sources/{source}/candidates.parquet",
        excluded="results/sources/{source}/excluded.csv",
    params:
        settings=lambda wildcards: json.dumps({"raw_dir": source_raw_dir(wildcards.source), "levels": config["levels"]}),
        videos_dir=lambda wildcards: f"results/sources/{wildcards.source}/videos",
    log:
        "logs/sources/{source}/convert.log",
    threads: 2
    conda:
        "../envs/core.yaml"
    message:
        "Converting {wildcards.source} to open-ended candidate instances (missing videos are reported)"
    shell:
        "python -m virtuebench.sources {wildcards.source} --settings {params.settings:q} "
        "--videos-dir {params.videos_dir} --out {output.candidates} --excluded {output.excluded} "
        "--threads {threads} > {log} 2>&1"


# Every converted video: where the frame rule finds a video before the final table exists.
checkpoint collect_candidates:
    input:
        expand("results/sources/{source}/candidates.parquet", source=CURATION_SOURCES),
    output:
        "results/sources/candidates.parquet",
    log:
        "logs/sources/collect.log",
    conda:
        "../envs/core.yaml"
    message:
        "Collecting the candidates of {input}"
    shell:
        "python -m virtuebench.curation merge {input} --out {output} > {log} 2>&1"


rule filter_answer_length:
    input:
        "results/sources/{source}/candidates.parquet",
    output:
        kept="results/curation/{source}/answer_length.parquet",
        removed="results/curation/{source}/answer_length_removed.csv",
        summary="results/curation/{source}/answer_length.json",
    params:
        max_words=CURATION.get("max_answer_words", 6),
    log:
        "logs/curation/{source}/answer_length.log",
    conda:
        "../envs/core.yaml"
    message:
        "Removing {wildcards.source} questions whose answer has more than {params.max_words} words"
    shell:
        "python -m virtuebench.curation length {input} --source {wildcards.source} --max-words {params.max_words} "
        "--out {output.kept} --removed {output.removed} --summary {output.summary} > {log} 2>&1"


rule filter_answerability:
    input:
        rules.filter_answer_length.output.kept,
    output:
        kept="results/curation/{source}/answerability.parquet",
        removed="results/curation/{source}/answerability_removed.csv",
        summary="results/curation/{source}/answerability.json",
        decisions="results/curation/{source}/answerability_decisions.jsonl",
    params:
        model=CURATION.get("filter_model", "Gemini-2.5-Flash"),
        model_config=lambda wildcards: curation_model_config("filter_model"),
        cache=CURATION.get("cache", "results/curation/llm_cache.sqlite"),
    log:
        "logs/curation/{source}/answerability.log",
    conda:
        "../envs/api.yaml"
    message:
        "Asking {params.model} whether each {wildcards.source} question suits the open-ended form (Keep/Discard)"
    shell:
        "python -m virtuebench.curation answerability {input} --source {wildcards.source} --model {params.model} "
        "--model-config {params.model_config:q} --cache {params.cache} --out {output.kept} "
        "--removed {output.removed} --summary {output.summary} --decisions {output.decisions} > {log} 2>&1"


rule filter_difficulty:
    input:
        rules.filter_answerability.output.kept,
    output:
        kept="results/curation/{source}/difficulty.parquet",
        removed="results/curation/{source}/difficulty_removed.csv",
        summary="results/curation/{source}/difficulty.json",
        decisions="results/curation/{source}/difficulty_decisions.jsonl",
    params:
        model=CURATION.get("filter_model", "Gemini-2.5-Flash"),
        model_config=lambda wildcards: curation_model_config("filter_model"),
        judge=CURATION.get("difficulty_judge", "rules"),
        judge_config=lambda wildcards: json.dumps(config.get("judges", {}).get(CURATION.get("difficulty_judge", "rules"), {"kind": "rules"})),
        judge_cache=config["judge_cache"],
        cache=CURATION.get("cache", "results/curation/llm_cache.sqlite"),
        frames_dir=lambda wildcards: f"results/curation/{wildcards.source}/single_frames",
        seed=CURATION.get("seed", 0),
    log:
        "logs/curation/{source}/difficulty.log",
    conda:
        "../envs/api.yaml"
    message:
        "Asking {params.model} each {wildcards.source} question with one random frame; correct answers are discarded"
    shell:
        "python -m virtuebench.curation difficulty {input} --source {wildcards.source} --model {params.model} "
        "--model-config {params.model_config:q} --cache {params.cache} --judge {params.judge} "
        "--judge-config {params.judge_config:q} --judge-cache {params.judge_cache} --frames-dir {params.frames_dir} "
        "--seed {params.seed} --out {output.kept} --removed {output.removed} --summary {output.summary} "
        "--decisions {output.decisions} > {log} 2>&1"


checkpoint merge_kept:
    input:
        kept=expand("results/curation/{source}/difficulty.parquet", source=CURATION_SOURCES),
        summaries=expand(
            "results/curation/{source}/{stage}.json",
            source=CURATION_SOURCES,
            stage=["answer_length", "answerability", "difficulty"],
        ),
    output:
        kept="results/curation/kept.parquet",
        counts="results/curation/filter_counts.csv",
    log:
        "logs/curation/merge.log",
    conda:
        "../envs/core.yaml"
    message:
        "Merging the questions every filter kept; the funnel's counts go to {output.counts}"
    shell:
        "python -m virtuebench.curation merge {input.kept} --summaries {input.summaries} "
        "--out {output.kept} --counts {output.counts} > {log} 2>&1"


rule draft_reference_answers:
    input:
        instances=rules.merge_kept.output.kept,
        frames=kept_frames_for_level,
    output:
        "results/curation/references/{model}/{level}.jsonl",
    params:
        model_config=model_config,
        frames_dir="results/frames",
    log:
        "logs/curation/references/{model}/{level}.log",
    resources:
        gpu=model_resource("gpus", 0),
        cpus_per_gpu=model_cpus_per_gpu,
        mem_mb=model_mem_mb,
        runtime=model_resource("runtime_min", 60),
        slurm_partition=gpu_partition,
    conda:
        model_env
    message:
        "Drafting per-level reference answers with {wildcards.model} at {wildcards.level} frames"
    shell:
        "python -m virtuebench.inference --instances {input.instances} --frames-dir {params.frames_dir} "
        "--model {wildcards.model} --model-config {params.model_config:q} --prompt reference "
        "--level {wildcards.level} --out {output} > {log} 2>&1"


rule export_annotation:
    input:
        kept=rules.merge_kept.output.kept,
        drafts=reference_drafts,
    output:
        directory("results/annotation/batches"),
    params:
        levels=config["levels"],
        batch_size=config["annotation"]["batch_size"],
    log:
        "logs/annotation/export.log",
    conda:
        "../envs/core.yaml"
    message:
        "Writing annotation batches (question, full-video answer, draft per level, frame folders) to {output}"
    shell:
        "python -m virtuebench.curation export --kept {input.kept} --drafts {input.drafts} --levels {params.levels} "
        "--frames-dir results/frames --batch-size {params.batch_size} --out {output} > {log} 2>&1"


rule make_stats:
    input:
        "results/instances.parquet",
    output:
        composition="results/stats/composition.csv",
        summary_csv="results/stats/sources.csv",
        summary_tex="results/stats/sources.tex",
    log:
        "logs/stats.log",
    conda:
        "../envs/core.yaml"
    message:
        "Counting instances per source, category and task type"
    shell:
        "python -m virtuebench.curation stats {input} --composition {output.composition} "
        "--summary-csv {output.summary_csv} --summary-tex {output.summary_tex} > {log} 2>&1"


# The supplementary's Table 1: the models on the sources' own questions, MCQ and open-ended, at one level.
checkpoint make_supplement_sets:
    input:
        "results/sources/{source}/candidates.parquet",
    output:
        mcq="results/supplement/{source}/mcq.parquet",
        oe="results/supplement/{source}/oe.parquet",
    params:
        level=SUPPLEMENT.get("level", 64),
        max_questions=lambda wildcards: f"--max-questions {SUPPLEMENT['max_questions_per_source']}" if SUPPLEMENT.get("max_questions_per_source") else "",
        seed=SUPPLEMENT.get("seed", 0),
    log:
        "logs/supplement/{source}/sets.log",
    conda:
        "../envs/core.yaml"
    message:
        "Writing {wildcards.source}'s questions in MCQ and open-ended form at {params.level} frames"
    shell:
        "python -m virtuebench.curation supplement-sets {input} --level {params.level} {params.max_questions} "
        "--seed {params.seed} --out-mcq {output.mcq} --out-oe {output.oe} > {log} 2>&1"


rule run_supplement_inference:
    input:
        instances="results/supplement/{source}/{form}.parquet",
        frames=supplement_frames,
    output:
        "results/supplement/responses/{model}/{source}/{form}.jsonl",
    params:
        model_config=model_config,
        prompt=lambda wildcards: "standard" if wildcards.form == "mcq" else SUPPLEMENT.get("oe_prompt", "honest"),
        level=SUPPLEMENT.get("level", 64),
        frames_dir="results/frames",
    log:
        "logs/supplement/responses/{model}/{source}/{form}.log",
    resources:
        gpu=model_resource("gpus", 0),
        cpus_per_gpu=model_cpus_per_gpu,
        mem_mb=model_mem_mb,
        runtime=model_resource("runtime_min", 60),
        slurm_partition=gpu_partition,
    conda:
        model_env
    message:
        "Asking {wildcards.model} {wildcards.source}'s questions in {wildcards.form} form"
    shell:
        "python -m virtuebench.inference --instances {input.instances} --frames-dir {params.frames_dir} "
        "--model {wildcards.model} --model-config {params.model_config:q} --prompt {params.prompt} "
        "--level {params.level} --out {output} > {log} 2>&1"


rule judge_supplement:
    input:
        responses=rules.run_supplement_inference.output[0],
        instances="results/supplement/{source}/{form}.parquet",
    output:
        "results/supplement/judgments/{model}/{source}/{form}.jsonl",
    params:
        judge=lambda wildcards: "mcq" if wildcards.form == "mcq" else JUDGE,
        judge_config=lambda wildcards: json.dumps({"kind": "mcq"} if wildcards.form == "mcq" else CHECKED.judges.get(JUDGE, {"kind": "rules"}), sort_keys=True),
        cache=config["judge_cache"],
    log:
        "logs/supplement/judgments/{model}/{source}/{form}.log",
    conda:
        "../envs/core.yaml"
    message:
        "Judging {wildcards.model}'s {wildcards.form} answers on {wildcards.source}"
    shell:
        "python -m virtuebench.judge {input.responses} --instances {input.instances} --judge {params.judge} "
        "--judge-config {params.judge_config:q} --cache {params.cache} --out {output} > {log} 2>&1"


rule make_supplement_table:
    input:
        judgments=expand(
            "results/supplement/judgments/{model}/{source}/{form}.jsonl",
            model=SUPPLEMENT.get("models", []),
            source=CURATION_SOURCES,
            form=["oe", "mcq"],
        ),
        scores="results/scores.csv",
    output:
        csv="results/supplement/table1.csv",
        tex="results/supplement/table1.tex",
    params:
        models=SUPPLEMENT.get("models", []),
        sources=CURATION_SOURCES,
        level=SUPPLEMENT.get("level", 64),
        prompt=config["report"]["prompt"],
    log:
        "logs/supplement/table1.log",
    conda:
        "../envs/core.yaml"
    message:
        "Writing the supplementary's Table 1 (MCQ vs open-ended on the sources, VirtueBench overall)"
    shell:
        "python -m virtuebench.curation supplement-table --judgments {input.judgments} --scores {input.scores} "
        "--prompt {params.prompt} --level {params.level} --models {params.models} --sources {params.sources} "
        "--csv {output.csv} --tex {output.tex} > {log} 2>&1"
