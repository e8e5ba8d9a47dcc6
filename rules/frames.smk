rule extract_frames:
    input:
        # ancient: a new table re-extracts a video only if the video itself (stamp), its path or the settings change
        instances=ancient(PLAN.frames_table()),
    output:
        directory(res("frames/{video_id}")),
    params:
        video=video_path,
        stamp=video_stamp,
        options=PLAN.frames_options(),
    log:
        logpath("frames/{video_id}.log"),
    threads: 2
    group:
        "frames"
    conda:
        "../envs/core.yaml"
    message:
        "Extracting the frames of every level of {wildcards.video_id}"
    shell:
        "python -m virtuebench.frames {params.video:q} {output} {params.options} --threads {threads} > {log} 2>&1"
