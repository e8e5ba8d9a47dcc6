# The per-item results browser, of either benchmark (docs/browser.md).
localrules:
    make_browser,


rule make_browser:
    input:
        instances=rules.make_instances.output.instances,
        frames=lambda wildcards: browser_frames(),
        judgments=lambda wildcards: browser_judgments(),
    output:
        res("browser/index.html"),
    params:
        out_dir=lambda wildcards, output: os.path.dirname(output[0]),
        thumb_width=config["report"]["thumb_width"],
        results=lambda wildcards, input: os.path.dirname(input.instances),
        frames_dir=lambda wildcards, input: os.path.join(os.path.dirname(input.instances), "frames"),
    log:
        logpath("browser.log"),
    conda:
        "../envs/core.yaml"
    message:
        "Writing the per-item results browser (open {output})"
    shell:
        "python -m virtuebench.browser {input.judgments} --chain-root {params.results} --instances {input.instances} --frames-dir {params.frames_dir} "
        "--out {params.out_dir} --thumb-width {params.thumb_width} > {log} 2>&1"
