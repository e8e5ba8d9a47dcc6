"""How long the report's statistics take at the paper's scale, against another commit's code in the same run:
25 models x 2 prompts over 1,328 items on 901 videos with their levels as in the paper (587 reach 1024 frames,
915 reach 512), random verdicts; 254,800 judgments, 1,500 score rows, 882 comparison rows.

    .venv/bin/python benchmarks/bench_scores.py [--ref main] [--models 25] [--resamples 2000]

Each side runs in its own process (the other commit's src/ unpacked from git, `git archive`), one after the other,
on the same judgments; the table gives wall clock and CPU time of scoring and of the comparisons, and how many
rows agree: every column alike, and, among the rows whose interval method is the same on both sides, how many
intervals are byte-identical (a method that changed on purpose changes its rows; docs/statistics.md). Wall clock
on a busy machine varies; CPU time less. docs/statistics.md has the last measurement.
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


def worker(out: Path, models: int, resamples: int) -> None:
    """One side: score and compare, write both tables and the timings under `out`."""
    from dataclasses import asdict

    from virtuebench.comparisons import compare, pairs
    from virtuebench.metrics import compute_scores
    from virtuebench.support.bootstrap import Bootstrap

    made, names = judgments(models)
    timings = {"judgments": len(made)}
    wall, cpu = time.perf_counter(), time.process_time()
    scores = compute_scores(made, Bootstrap(resamples, 0))
    timings["scores"] = (len(scores), time.perf_counter() - wall, time.process_time() - cpu)
    wall, cpu = time.perf_counter(), time.process_time()
    rows, _ = compare(made, pairs(names, ["honest", "plain"], "honest"), "rules", Bootstrap(resamples, 0))
    timings["comparisons"] = (len(rows), time.perf_counter() - wall, time.process_time() - cpu)
    for name, table in (("scores", scores), ("comparisons", rows)):
        records = [asdict(row) for row in table]
        with (out / f"{name}.csv").open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(records[0]))
            writer.writeheader()
            writer.writerows(records)
    (out / "timings.json").write_text(json.dumps(timings))


def run_side(src: Path, out: Path, models: int, resamples: int) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), *filter(None, [os.environ.get("PYTHONPATH")])])}
    command = [sys.executable, __file__, "--worker", str(out), "--models", str(models), "--resamples", str(resamples)]
    subprocess.run(command, env=env, check=True)
    return json.loads((out / "timings.json").read_text())


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
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.models, args.resamples)
        return
    with tempfile.TemporaryDirectory(prefix="bench_scores-") as scratch:
        base = Path(scratch)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.ref, "src"], check=True, capture_output=True).stdout
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(base / "old", filter="data")
        sides = {"old": run_side(base / "old" / "src", base / "old-out", args.models, args.resamples)}
        sides["new"] = run_side(ROOT / "src", base / "new-out", args.models, args.resamples)
        print(f"{sides['new']['judgments']} judgments, {args.resamples} resamples; load average {os.getloadavg()[0]:.1f}")
        print("| step | rows | old wall s | old cpu s | new wall s | new cpu s | wall ratio |")
        print("|---|---|---|---|---|---|---|")
        for step in ("scores", "comparisons"):
            (rows, old_wall, old_cpu), (_, new_wall, new_cpu) = sides["old"][step], sides["new"][step]
            print(f"| {step} | {rows} | {old_wall:.1f} | {old_cpu:.1f} | {new_wall:.1f} | {new_cpu:.1f} | {old_wall / new_wall:.1f}x |")
        old_total = sum(sides["old"][step][1] for step in ("scores", "comparisons"))
        new_total = sum(sides["new"][step][1] for step in ("scores", "comparisons"))
        print(f"| together | | {old_total:.1f} | | {new_total:.1f} | | {old_total / new_total:.1f}x |")
        scores = (("ci_method", "ci_low", "ci_high"), ("trust_ci_method", "trust_ci_low", "trust_ci_high"))
        print("scores:", agreement(base / "old-out" / "scores.csv", base / "new-out" / "scores.csv", scores))
        print(
            "comparisons:",
            agreement(base / "old-out" / "comparisons.csv", base / "new-out" / "comparisons.csv", (("ci_method", "ci_low", "ci_high"),)),
        )


if __name__ == "__main__":
    main()
