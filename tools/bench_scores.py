"""How long the report's statistics take at the paper's scale, against another commit's code in the same run:
25 models x 2 prompts over 1,328 items on 901 videos with their levels as in the paper (587 reach 1024 frames,
915 reach 512), random verdicts; 254,800 judgments, 1,500 score rows, 882 comparison rows.

    .venv/bin/python tools/bench_scores.py [--ref main] [--models 25] [--resamples 2000]

Each side (the other commit's src/ unpacked from git, `git archive`) runs scoring and then the comparisons, each step
in its own process as the workflow's two jobs run, on the same judgments; where the side's code keeps the drawn
bootstrap weights on disk (Bootstrap.cache), the comparisons read those the scoring drew, as in the workflow. The
comparisons are also run once on their own (no shared draws). The table gives wall clock and CPU time of each step
(the statistics only: not making the judgments, not starting Python), and the result says whether the two sides'
scores.csv and comparisons.csv are byte-identical and how many rows agree: every column alike, and, among the rows
whose interval method is the same on both sides, how many intervals are byte-identical (a method that changed on
purpose changes its rows; docs/statistics.md). Wall clock on a busy machine varies; CPU time less.
docs/statistics.md has the last measurement.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def judgments(models: int) -> tuple[list, list[str]]:
    from virtuebench.records import Judgment

    rng = random.Random(0)
    names = [f"m{i:02d}" for i in range(models)]
    levels = [64, 128, 256, 512, 1024]
    items = []  # 1328 items on 901 videos; items reach levels as in the paper (587 reach 1024, 915 reach 512)
    for i in range(1328):
        top = 1024 if i < 587 else 512 if i < 915 else rng.choice([64, 128, 256])
        items.append(
            (
                f"q{i}",
                f"v{i % 901}",
                [level for level in levels if level <= top],
                rng.random() < 0.3,
                rng.choice(["perception", "reasoning"]),
            )
        )
    made = []
    for m in names:
        for p in ("honest", "plain"):
            for q, v, lv, unans, cat in items:
                for level in lv:
                    c = rng.random() < 0.5
                    made.append(
                        Judgment(
                            q, m, p, level, "rules", cat, "t", "x", unans, "r", int(unans and c), int(c), True, "", None, "f", video_id=v
                        )
                    )
    return made, names


def worker(out: Path, step: str, models: int, resamples: int, cache: str | None) -> None:
    """One step of one side, in its own process as the workflow runs it: score or compare, write the table and the
    step's timing under `out`. `cache`: the folder sharing the drawn weights between the steps (where the side's code
    has one)."""
    from dataclasses import asdict, fields

    from virtuebench.comparisons import compare, pairs
    from virtuebench.metrics import compute_scores
    from virtuebench.support.bootstrap import Bootstrap

    made, names = judgments(models)
    shared = cache is not None and "cache" in {field.name for field in fields(Bootstrap)}
    settings = Bootstrap(resamples, 0, cache=cache) if shared else Bootstrap(resamples, 0)
    wall, cpu = time.perf_counter(), time.process_time()
    if step == "scores":
        table = compute_scores(made, settings)
    else:
        table, _ = compare(made, pairs(names, ["honest", "plain"], "honest"), "rules", settings)
    timing = (len(table), time.perf_counter() - wall, time.process_time() - cpu)
    records = [asdict(row) for row in table]
    with (out / f"{step}.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(records[0]))
        writer.writeheader()
        writer.writerows(records)
    (out / f"{step}.json").write_text(json.dumps({"judgments": len(made), "timing": timing, "shared": shared}))


def run_step(src: Path, out: Path, step: str, models: int, resamples: int, cache: Path | None) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), *filter(None, [os.environ.get("PYTHONPATH")])])}
    command = [sys.executable, __file__, "--worker", str(out), "--step", step, "--models", str(models), "--resamples", str(resamples)]
    subprocess.run(command + (["--cache", str(cache)] if cache else []), env=env, check=True)
    return json.loads((out / f"{step}.json").read_text())


def run_side(src: Path, out: Path, models: int, resamples: int, cache: Path | None) -> dict:
    """Scores, then the comparisons, each in its own process (the workflow's two jobs), sharing `cache`."""
    return {step: run_step(src, out, step, models, resamples, cache) for step in ("scores", "comparisons")}


def identical(old: Path, new: Path) -> str:
    return "byte-identical files" if old.read_bytes() == new.read_bytes() else "FILES DIFFER"


def agreement(old: Path, new: Path, method_columns: tuple[tuple[str, str, str], ...]) -> str:
    """How many rows agree in every column the old side has; and, where a row's interval method is the same on
    both sides, whether the interval is too."""
    before, after = (list(csv.DictReader(path.open())) for path in (old, new))
    if len(before) != len(after):
        return f"{len(before)} rows against {len(after)}: not comparable row by row"
    alike = sum(all(b[k] == a.get(k) for k in b) for b, a in zip(before, after))
    same = identical = 0
    for b, a in zip(before, after):
        for method, low, high in method_columns:
            if b[method] == a.get(method):
                same += 1
                identical += (b[low], b[high]) == (a.get(low), a.get(high))
    return f"{alike} of {len(before)} rows alike in every column; {identical} of the {same} intervals whose method did not change are byte-identical"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ref", default="main", help="the commit to compare against (its src/, from git)")
    parser.add_argument("--models", type=int, default=25, help="models (x 2 prompts); 25 is the paper's scale")
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--step", choices=("scores", "comparisons"), help=argparse.SUPPRESS)
    parser.add_argument("--cache", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.step, args.models, args.resamples, args.cache)
        return
    with tempfile.TemporaryDirectory(prefix="bench_scores-") as scratch:
        base = Path(scratch)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.ref, "src"], check=True, capture_output=True).stdout
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(base / "old", filter="data")
        load = os.getloadavg()[0]
        sides = {"old": run_side(base / "old" / "src", base / "old-out", args.models, args.resamples, base / "old-cache")}
        sides["new"] = run_side(ROOT / "src", base / "new-out", args.models, args.resamples, base / "new-cache")
        # the comparisons on their own, drawing every weight again: what sharing the draws saves
        alone = run_step(ROOT / "src", base / "alone-out", "comparisons", args.models, args.resamples, None)
        judged = sides["new"]["scores"]["judgments"]
        print(f"{judged} judgments, {args.resamples} resamples; load average {load:.1f} before, {os.getloadavg()[0]:.1f} after")
        print("each step in its own process, as the workflow's jobs run; new: the comparisons read the weights the scores drew")
        print("| step | rows | old wall s | old cpu s | new wall s | new cpu s | wall ratio | cpu ratio |")
        print("|---|---|---|---|---|---|---|---|")
        rows = [(step, sides["old"][step]["timing"], sides["new"][step]["timing"]) for step in ("scores", "comparisons")]
        rows.append(("comparisons, no shared draws", sides["old"]["comparisons"]["timing"], alone["timing"]))
        for step, (count, old_wall, old_cpu), (_, new_wall, new_cpu) in rows:
            print(
                f"| {step} | {count} | {old_wall:.1f} | {old_cpu:.1f} | {new_wall:.1f} | {new_cpu:.1f} | "
                f"{old_wall / new_wall:.1f}x | {old_cpu / new_cpu:.1f}x |"
            )
        old_wall, old_cpu = (sum(sides["old"][step]["timing"][at] for step in ("scores", "comparisons")) for at in (1, 2))
        new_wall, new_cpu = (sum(sides["new"][step]["timing"][at] for step in ("scores", "comparisons")) for at in (1, 2))
        print(
            f"| scores + comparisons | | {old_wall:.1f} | {old_cpu:.1f} | {new_wall:.1f} | {new_cpu:.1f} | "
            f"{old_wall / new_wall:.1f}x | {old_cpu / new_cpu:.1f}x |"
        )
        scores = (("ci_method", "ci_low", "ci_high"), ("trust_ci_method", "trust_ci_low", "trust_ci_high"))
        old_scores, new_scores = base / "old-out" / "scores.csv", base / "new-out" / "scores.csv"
        old_comparisons, new_comparisons = base / "old-out" / "comparisons.csv", base / "new-out" / "comparisons.csv"
        print(f"scores: {identical(old_scores, new_scores)};", agreement(old_scores, new_scores, scores))
        print(
            f"comparisons: {identical(old_comparisons, new_comparisons)}, without shared draws "
            f"{identical(old_comparisons, base / 'alone-out' / 'comparisons.csv')};",
            agreement(old_comparisons, new_comparisons, (("ci_method", "ci_low", "ci_high"),)),
        )


if __name__ == "__main__":
    main()
