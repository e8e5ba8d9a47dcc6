# The supplementary's Table 1 (source virtuebench only): the models of config.supplement.models on the
# questions of config.supplement.sources (the paper's MLVU, LVBench, LongVideoBench and VideoEval-Pro),
# MCQ and open-ended, at one level, beside their VirtueBench scores.
# The paper samples 64 frames from every video, whatever its length: each source is converted again with
# clip sampling (every question of every readable video has the level), and each video gets its own
# SUPPLEMENT level frames over its whole length (results/supplement/frames/<source>/<video_id>/), apart from
# VirtueBench's 1 FPS grid.
# convert (clip) -> sets (per source and form; question_pool filtered: only what the curation's open-ended filters,
# run on these candidates, keep) -> frames (short_video_frames) -> inference -> judging -> results/supplement/table1.{csv,tex}


use rule convert_source as convert_supplement_source with:
    output:
        candidates=res("supplement/{source}/candidates.parquet"),
        excluded=res("supplement/{source}/excluded.csv"),
    params:
        settings=supplement_convert_settings,  # LongVideoBench with its subtitles: the release's durations too
        videos_dir=lambda wildcards: res(f"supplement/{wildcards.source}/videos"),
    log:
        logpath("supplement/{source}/convert.log"),
    message:
        f"Converting every {{wildcards.source}} question to candidates with {SUPPLEMENT['level']} frames over any video"


# question_pool filtered: the curation's two open-ended filters (answer length, then Keep/Discard) run on the supplement's
# own candidates (clip sampling), not on the curation's 1 FPS ones, so a question on a video shorter than the smallest
# VirtueBench level (LongVideoBench's 8-15 s group) is filtered like any other, never dropped for its length. The
# filter model's answers are cached (curation.cache): a question the curation asked already is not asked again.
localrules:
    filter_supplement_answer_length,
    filter_supplement_answerability,


use rule filter_answer_length as filter_supplement_answer_length with:
    input:
        rules.convert_supplement_source.output.candidates,
    output:
        kept=res("supplement/{source}/pool/answer_length.parquet"),
        removed=res("supplement/{source}/pool/answer_length_removed.csv"),
        summary=res("supplement/{source}/pool/answer_length.json"),
    log:
        logpath("supplement/{source}/pool/answer_length.log"),


use rule filter_answerability as filter_supplement_answerability with:
    input:
        rules.filter_supplement_answer_length.output.kept,
    output:
        kept=res("supplement/{source}/pool/answerability.parquet"),
        removed=res("supplement/{source}/pool/answerability_removed.csv"),
        summary=res("supplement/{source}/pool/answerability.json"),
        decisions=res("supplement/{source}/pool/answerability_decisions.jsonl"),
    log:
        logpath("supplement/{source}/pool/answerability.log"),


checkpoint make_supplement_sets:
    input:
        candidates=rules.convert_supplement_source.output.candidates,
        pool=supplement_pool,  # question_pool filtered: the curation's kept questions of the source
    output:
        mcq=res("supplement/{source}/mcq.parquet"),
        oe=res("supplement/{source}/oe.parquet"),
    params:
        level=SUPPLEMENT["level"],
        max_questions=lambda wildcards: f"--max-questions {SUPPLEMENT['max_questions_per_source']}" if SUPPLEMENT["max_questions_per_source"] else "",
        # the seed draws the sample, so without one it is 0 in the command: a changed seed alone remakes no set (and no
        # supplement inference or judging after it)
        seed=SUPPLEMENT["seed"] if SUPPLEMENT["max_questions_per_source"] else 0,
        # --pool (question_pool filtered) and LongVideoBench's --subtitles (longvideobench_subtitles: interleaved) in one
        # param: the command's text stays as it was before subtitles existed (a changed command would remake every set,
        # and every supplement inference job after it, which reads its set by date)
        pool=lambda wildcards, input: (f"--pool {input.pool}" if input.pool else "") + supplement_subtitles_option(wildcards),
    log:
        logpath("supplement/{source}/sets.log"),
    conda:
        "../envs/core.yaml"
    message:
        "Writing {wildcards.source}'s questions in MCQ and open-ended form at {params.level} frames"
    shell:
        "python -m virtuebench.curation supplement-sets {input.candidates} --level {params.level} {params.max_questions} "
        "--seed {params.seed} {params.pool} --out-mcq {output.mcq} --out-oe {output.oe} > {log} 2>&1"


use rule extract_frames as extract_supplement_frames with:
    input:
        ancient(res("supplement/{source}/oe.parquet")),
    output:
        directory(res("supplement/frames/{source}/{video_id}")),
    params:
        video=supplement_video_path,
        stamp=supplement_video_stamp,
        options=supplement_frames_options,
    log:
        logpath("supplement/frames/{source}/{video_id}.log"),
    message:
        f"Extracting {SUPPLEMENT['level']} frames over the whole of {{wildcards.video_id}}"


# An inference job (rules/inference.smk): the MCQ form with mcq_prompt (standard), the open-ended one with oe_prompt (honest;
# VideoEval-Pro's with its authors' suffix where videoevalpro_suffix says so: e.g. honest+concise).
use rule run_inference as run_supplement_inference with:
    input:
        instances=res("supplement/{source}/{form}.parquet"),
        frames=supplement_frames,
    output:
        res("supplement/responses/{model}/{source}/{form}.jsonl"),
    params:
        rows="",  # the set's table is an ordinary input here: tracked by date
        frames_dir=lambda wildcards: res(f"supplement/frames/{wildcards.source}"),
        prompt=supplement_prompt,
        level=SUPPLEMENT["level"],
    log:
        logpath("supplement/responses/{model}/{source}/{form}.log"),
    message:
        "Asking {wildcards.model} {wildcards.source}'s questions in {wildcards.form} form"


# MCQ answers by their letter; open-ended ones by the run's judge (VideoEval-Pro's by its authors' grader with
# videoevalpro_grader: authors).
rule judge_supplement:
    input:
        responses=rules.run_supplement_inference.output[0],
        instances=res("supplement/{source}/{form}.parquet"),
    output:
        res("supplement/judgments/{model}/{source}/{form}.jsonl"),
    params:
        judge=lambda wildcards: supplement_judge(wildcards).name,
        judge_config=lambda wildcards: PLAN.judge_config(supplement_judge(wildcards)),
        cache=JUDGE_CACHE,
    resources:
        run_config=lambda wildcards: PLAN.judge_run_config(supplement_judge(wildcards)),
    log:
        logpath("supplement/judgments/{model}/{source}/{form}.log"),
    conda:
        "../envs/core.yaml"
    message:
        "Judging {wildcards.model}'s {wildcards.form} answers on {wildcards.source}"
    shell:
        "python -m virtuebench.judge {input.responses} --instances {input.instances} --judge {params.judge} "
        "--judge-config {params.judge_config:q} --judge-run-config {resources.run_config:q} --cache {params.cache} "
        "--out {output} > {log} 2>&1"


rule make_supplement_table:
    input:
        judgments=PLAN.supplement_judgments(),  # OE only for VideoEval-Pro, as the paper's table
        scores=res("scores.csv"),
        excluded=[res(f"supplement/{source}/excluded.csv") for source in SUPPLEMENT_SOURCES],
    output:
        csv=res("supplement/table1.csv"),
        tex=res("supplement/table1.tex"),
    params:
        models=SUPPLEMENT["models"],
        sources=SUPPLEMENT_SOURCES,
        level=SUPPLEMENT["level"],
        prompt=config["report"]["prompt"],
        mcq_prompt=SUPPLEMENT["mcq_prompt"],
        oe_prompt=SUPPLEMENT["oe_prompt"],
        mlvu_average=SUPPLEMENT["mlvu_average"],
        question_pool=SUPPLEMENT["question_pool"],
        short_video_frames=SUPPLEMENT["short_video_frames"],
        videoevalpro_grader=SUPPLEMENT["videoevalpro_grader"],
        videoevalpro_suffix="yes" if PLAN.supplement_choices.uses_suffix else "no",
        longvideobench_subtitles="interleaved" if SUPPLEMENT["longvideobench_subtitles"] == "interleaved" else "false",
        # The models' named registry choices in effect (config.model_choices), stated in the caption ("" where none).
        model_choices=PLAN.choices_option(SUPPLEMENT["models"]),
    log:
        logpath("supplement/table1.log"),
    conda:
        "../envs/core.yaml"
    message:
        "Writing the supplementary's Table 1 (MCQ vs open-ended on the sources, VirtueBench overall)"
    shell:
        "python -m virtuebench.curation supplement-table --judgments {input.judgments} --scores {input.scores} "
        "--prompt {params.prompt} --level {params.level} --models {params.models} --sources {params.sources} "
        "--csv {output.csv} --tex {output.tex} --mcq-prompt {params.mcq_prompt} --oe-prompt {params.oe_prompt} "
        "--mlvu-average {params.mlvu_average} --question-pool {params.question_pool} "
        "--short-video-frames {params.short_video_frames} --videoevalpro-grader {params.videoevalpro_grader} "
        "--videoevalpro-suffix {params.videoevalpro_suffix} --longvideobench-subtitles {params.longvideobench_subtitles} --excluded {input.excluded} "
        "{params.model_choices} > {log} 2>&1"
