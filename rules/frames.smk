# One job per video and level: a level added extracts only that level, and the levels already there are never
# rewritten; a removed level folder is extracted again to the same frames (docs/frames.md).
rule extract_frames:
    input:
        # ancient: a new table re-extracts a video only if the video's content (stamp), its path or the settings change
        instances=ancient(PLAN.frames_table()),
    output:
        directory(res("frames/{video_id}/{level}")),
    params:
        video=video_path,
        stamp=video_stamp,  # the video's content fingerprint, not its date: a touched or copied video reruns nothing
        options=frames_level_options,
    log:
        logpath("frames/{video_id}/{level}.log"),
    threads: 2
    group:
        "frames"
    conda:
        "../envs/core.yaml"
    message:
        "Extracting the frames of {wildcards.video_id} at level {wildcards.level}"
    shell:
        "python -m virtuebench.frames {params.video:q} {output} {params.options} --threads {threads} > {log} 2>&1"
