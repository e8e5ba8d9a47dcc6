# Building VirtueBench from the six public benchmarks (VirtueBench (arXiv:2603.07071), section 3.2; config source: virtuebench):
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
        res("sources/{source}/raw/download.json"),
    params:
        out_dir=lambda wildcards, output: os.path.dirname(output[0]),
        revision=lambda wildcards: source_revision_option(wildcards.source),
        verify=CURATION["verify"],
    log:
        logpath("sources/{source}/download.log"),
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
        candidates=res("sources/{source}/candidates.parquet"),
        excluded=res("sources/{source}/excluded.csv"),
    params:
        settings=lambda wildcards: PLAN.curation_source_settings(wildcards.source),
        videos_dir=lambda wildcards: res(f"sources/{wildcards.source}/videos"),
    log:
        logpath("sources/{source}/convert.log"),
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
        expand(res("sources/{source}/candidates.parquet"), source=CURATION_SOURCES),
    output:
        res("sources/candidates.parquet"),
    log:
        logpath("sources/collect.log"),
    conda:
        "../envs/core.yaml"
    message:
        "Collecting the candidates of {input}"
    shell:
        "python -m virtuebench.curation merge {input} --out {output} > {log} 2>&1"


rule filter_answer_length:
    input:
        res("sources/{source}/candidates.parquet"),
    output:
        kept=res("curation/{source}/answer_length.parquet"),
        removed=res("curation/{source}/answer_length_removed.csv"),
        summary=res("curation/{source}/answer_length.json"),
    params:
        max_words=CURATION["max_answer_words"],
    log:
        logpath("curation/{source}/answer_length.log"),
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
        kept=res("curation/{source}/answerability.parquet"),
        removed=res("curation/{source}/answerability_removed.csv"),
        summary=res("curation/{source}/answerability.json"),
        decisions=res("curation/{source}/answerability_decisions.jsonl"),
    params:
        model=CURATION["filter_model"],
        model_config=lambda wildcards: curation_model_config("filter_model"),
        cache=CURATION_CACHE,
    resources:
        model_run=lambda wildcards: curation_model_run_config("filter_model"),
    log:
        logpath("curation/{source}/answerability.log"),
    conda:
        "../envs/api.yaml"
    message:
        "Asking {params.model} whether each {wildcards.source} question suits the open-ended form (Keep/Discard)"
    shell:
        "python -m virtuebench.curation answerability {input} --source {wildcards.source} --model {params.model} "
        "--model-config {params.model_config:q} --model-run-config {resources.model_run:q} --cache {params.cache} --out {output.kept} "
        "--removed {output.removed} --summary {output.summary} --decisions {output.decisions} > {log} 2>&1"


rule filter_difficulty:
    input:
        rules.filter_answerability.output.kept,
    output:
        kept=res("curation/{source}/difficulty.parquet"),
        removed=res("curation/{source}/difficulty_removed.csv"),
        summary=res("curation/{source}/difficulty.json"),
        decisions=res("curation/{source}/difficulty_decisions.jsonl"),
    params:
        model=CURATION["filter_model"],
        model_config=lambda wildcards: curation_model_config("filter_model"),
        judge=CURATION["difficulty_judge"],
        judge_config=lambda wildcards: PLAN.judge_config(judge_spec(CURATION["difficulty_judge"]), responses=False),
        judge_cache=JUDGE_CACHE,
        cache=CURATION_CACHE,
        frames_dir=lambda wildcards: res(f"curation/{wildcards.source}/single_frames"),
        seed=CURATION["seed"],
        frame_max_side=CURATION["filter_frame_max_side"] or "none",
    resources:
        model_run=lambda wildcards: curation_model_run_config("filter_model"),
        judge_run=lambda wildcards: PLAN.judge_run_config(judge_spec(CURATION["difficulty_judge"])),
    log:
        logpath("curation/{source}/difficulty.log"),
    conda:
        "../envs/api.yaml"
    message:
        "Asking {params.model} each {wildcards.source} question with one random frame; correct answers are discarded"
    shell:
        "python -m virtuebench.curation difficulty {input} --source {wildcards.source} --model {params.model} "
        "--model-config {params.model_config:q} --model-run-config {resources.model_run:q} --cache {params.cache} "
        "--judge {params.judge} --judge-config {params.judge_config:q} --judge-run-config {resources.judge_run:q} "
        "--judge-cache {params.judge_cache} --frames-dir {params.frames_dir} "
        "--seed {params.seed} --frame-max-side {params.frame_max_side} --out {output.kept} --removed {output.removed} --summary {output.summary} "
        "--decisions {output.decisions} > {log} 2>&1"


checkpoint merge_kept:
    input:
        kept=expand(res("curation/{source}/difficulty.parquet"), source=CURATION_SOURCES),
        candidates=res("sources/candidates.parquet"),
        summaries=expand(
            res("curation/{source}/{stage}.json"),
            source=CURATION_SOURCES,
            stage=["answer_length", "answerability", "difficulty"],
        ),
    output:
        kept=res("curation/kept.parquet"),
        counts=res("curation/filter_counts.csv"),
        paper_counts=res("curation/paper_counts.csv"),  # the funnel beside the paper's counts
        run_record=res("curation/kept_run.json"),  # read by make_instances: why in rules/sources.smk
    log:
        logpath("curation/merge.log"),
    conda:
        "../envs/core.yaml"
    message:
        "Merging the questions every filter kept; the funnel's counts go to {output.counts}"
    shell:
        "python -m virtuebench.curation merge {input.kept} --summaries {input.summaries} "
        "--out {output.kept} --counts {output.counts} --candidates {input.candidates} --paper-counts {output.paper_counts} "
        "--run-record {output.run_record} > {log} 2>&1"


# An inference job (rules/inference.smk) of the reference model on the kept questions.
use rule run_inference as draft_reference_answers with:
    input:
        instances=kept_table,
        frames=kept_frames_for_level,
    output:
        res("curation/references/{model}/{level}.jsonl"),
    params:
        prompt="reference",
        rows=kept_digest,
    log:
        logpath("curation/references/{model}/{level}.log"),
    message:
        "Drafting per-level reference answers with {wildcards.model} at {wildcards.level} frames"


rule export_annotation:
    input:
        kept=kept_table,
        drafts=PLAN.reference_drafts(),
    output:
        directory(res("annotation/batches")),
    params:
        kept=kept_digest,
        levels=config["levels"],
        batch_size=config["annotation"]["batch_size"],
        frames_dir=res("frames"),
    log:
        logpath("annotation/export.log"),
    conda:
        "../envs/core.yaml"
    message:
        "Writing annotation batches (question, full-video answer, draft per level, frame folders) to {output}"
    shell:
        "python -m virtuebench.curation export --kept {input.kept} --drafts {input.drafts} --levels {params.levels} "
        "--frames-dir {params.frames_dir} --batch-size {params.batch_size} --out {output} > {log} 2>&1"


rule make_stats:
    input:
        instances=res("instances.parquet"),
        funnel=res("curation/paper_counts.csv"),
    output:
        composition=res("stats/composition.csv"),
        summary_csv=res("stats/sources.csv"),
        summary_tex=res("stats/sources.tex"),
        paper_counts=res("stats/paper_counts.csv"),  # the funnel's and the instances' counts beside the paper's
    params:
        categories=json.dumps(config["report"]["categories"], sort_keys=True),  # counted as the scores count them
    log:
        logpath("stats.log"),
    conda:
        "../envs/core.yaml"
    message:
        "Counting instances per source, category and task type, and beside the paper's counts"
    shell:
        "python -m virtuebench.curation stats {input.instances} --composition {output.composition} "
        "--summary-csv {output.summary_csv} --summary-tex {output.summary_tex} --funnel {input.funnel} "
        "--paper-counts {output.paper_counts} --categories {params.categories:q} > {log} 2>&1"
