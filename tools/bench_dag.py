"""How long Snakemake takes to build the DAG at paper scale: 1,328 instances over 901 videos (915 reaching
512 frames, 587 reaching 1024, as in the paper), the 25 paper models, 5 levels, 2 prompts.

    python tools/bench_dag.py [--workdir DIR]

Writes a generated instances table (no videos: the dry run does not need them) and times `snakemake -n`.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "src"), str(REPO / "tests")]

from helpers.workflow import snakemake  # noqa: E402  (the tests' Snakemake call: the same command, config written beside it)


def paper_scale_instances(path: Path) -> None:
    from virtuebench import REFUSAL_ANSWER
    from virtuebench.instances import Instance, write_instances
    from virtuebench.levels import available_levels

    rng = random.Random(0)
    # Instance counts per highest level: 1328 total, 915 reach 512, 587 reach 1024.
    tops = [1024] * 587 + [512] * (915 - 587) + [256] * 180 + [128] * 130 + [64] * (1328 - 915 - 180 - 130)
    instances, video = [], 0
    while len(instances) < len(tops):
        top = tops[len(instances)]
        duration = {64: 100, 128: 200, 256: 400, 512: 800, 1024: 2000}[top] + rng.random() * 20
        per_video = 2 if video < 1328 - 901 else 1  # 427 videos with two questions, 474 with one: 901 videos
        for _ in range(min(per_video, len(tops) - len(instances))):
            levels = available_levels(duration, (64, 128, 256, 512, 1024))
            answers = {level: rng.choice(["yes", REFUSAL_ANSWER]) for level in levels}
            instances.append(
                Instance(
                    f"i{len(instances):04d}",
                    f"v{video:04d}",
                    "paper-scale",
                    rng.choice(["perception", "reasoning"]),
                    "t",
                    "What happens?",
                    "yes",
                    duration,
                    f"results/videos/v{video:04d}.mp4",
                    answers,
                )
            )
        video += 1
    write_instances(instances, path)
    print(
        f"{len(instances)} instances over {video} videos; reaching 512: {sum(512 in i.answers for i in instances)}, "
        f"1024: {sum(1024 in i.answers for i in instances)}",
        file=sys.stderr,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", default=None)
    args = parser.parse_args()
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="vb-dag-"))
    (workdir / "results" / "videos").mkdir(parents=True, exist_ok=True)
    paper_scale_instances(workdir / "results" / "instances.parquet")
    (workdir / "results" / "instances_excluded.csv").write_text("item,reason\n")
    registry = yaml.safe_load((REPO / "config" / "models.yaml").read_text())
    config = {
        "source": {"name": "synthetic"},
        "levels": [64, 128, 256, 512, 1024],
        "prompts": ["honest", "plain"],
        "judge": "rules",
        "models": [name for name in registry if name not in ("refuse", "guess", "oracle")],
    }
    started = time.monotonic()
    run = snakemake(workdir, "-n", "--quiet", "rules", config=config, timeout=1800)
    elapsed = time.monotonic() - started
    if run.returncode != 0:
        print(run.stderr[-3000:], file=sys.stderr)
        return 1
    counts = dict(re.findall(r"^(\w+)\s+(\d+)$", run.stdout + run.stderr, re.MULTILINE))
    print(f"snakemake -n at paper scale: {elapsed:.1f} s; jobs: {counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
