"""Coverage of the report's 95% intervals, and the paired test's false-positive rate, on simulated benchmarks
with a known true rate (virtuebench.support.bootstrap; docs/statistics.md holds the last run's tables).

    .venv/bin/python benchmarks/bench_coverage.py [--simulations 1000] [--resamples 2000] [--out docs/statistics.md]

A benchmark: `videos` videos with 1-7 questions each (as VirtueBench). `clustered`: each video's own rate is
drawn from a Beta with mean `rate` and concentration 4 (items of a video are correlated, intra-video correlation
0.2); `independent`: every item is right with probability `rate`. Each benchmark's interval comes from the same
code as results/scores.csv (`Resampler.interval`, the fallback's intra-video correlation estimated from the
benchmark itself). Coverage: the share of benchmarks whose interval holds the true rate. The paired test: two
arms drawn from the same per-video rates (no difference); its false-positive rate is the share of p < 0.05, and
its interval's coverage the share holding 0. The trust score (Kalai's scheme, t = 0.5): clustered items right
with the video's own rate, else refused or wrong with equal chance (true mean rate - (1 - rate) / 2); its
interval (the closed form on its own cluster design) as results/scores.csv's `trust_ci_*`.

Each cell also gives the coverage conditional on the cases where the closed form is forced whatever the number
of videos, the fallback cases: every item right or every item wrong (the trust score: every item the same
value; the paired interval: no discordant item). There the values have no variance and each video counts as one
item (n_eff = the number of videos, virtuebench.support.bootstrap.cluster_design).
Sized to finish well within 10 minutes on 2 busy cores (46 s at load average 5, 193 s at 10, 2026-11-26): 1000 benchmarks per cell and 2000 resamples (as the
report), the benchmarks of a cell sharing one set of resamples (all have the same videos, and the report shares
the resamples of numbers over the same videos too); the Monte Carlo error of a coverage near 95% is then 0.7
points (one standard error), and that of a conditional cell sqrt(p (1 - p) / cases).
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path

import numpy as np

from virtuebench.support.bootstrap import BCA_MIN_VIDEOS, Bootstrap, Resampler

VIDEOS = (5, 12, 25, 50, 200)
RATES = (0.5, 0.9, 0.97, 0.99)
TRUST_RATES = (0.5, 0.9, 0.97)  # the share of items right
PAIRED_RATES = (0.5, 0.9, 0.97)
CONCENTRATION = 4.0


def benchmark(rng: np.random.Generator, videos: int, rate: float, clustered: bool) -> tuple[np.ndarray, np.ndarray]:
    per_video = rng.integers(1, 8, size=videos)
    clusters = np.repeat(np.arange(videos), per_video)
    own = rng.beta(rate * CONCENTRATION, (1 - rate) * CONCENTRATION, size=videos) if clustered else np.full(videos, rate)
    return clusters, np.repeat(own, per_video)


class Cell:
    """One cell's tally: coverage, mean width and methods, over all benchmarks and over the fallback cases."""

    def __init__(self) -> None:
        self.covered, self.widths, self.methods = 0, [], Counter()
        self.cases = self.cases_covered = 0

    def add(self, low: float, high: float, truth: float, method: str, fallback_case: bool) -> None:
        holds = low <= truth <= high
        self.covered += holds
        self.widths.append(high - low)
        self.methods[method] += 1
        self.cases += fallback_case
        self.cases_covered += holds and fallback_case

    def text(self) -> str:
        runs = len(self.widths)
        share = f"{self.covered / runs:.1%} ({float(np.mean(self.widths)):.2f}; {_used(self.methods, runs)})"
        return f"{share} | {_conditional(self.cases_covered, self.cases)}"

    def low(self) -> list[str]:
        """Where coverage falls below 93%: overall, and in the fallback cases (with at least 20 of them)."""
        found = []
        if self.covered / len(self.widths) < 0.93:
            found.append(f"{self.covered / len(self.widths):.1%}")
        if self.cases >= 20 and self.cases_covered / self.cases < 0.93:
            found.append(f"{_conditional(self.cases_covered, self.cases)} in the fallback cases")
        return found


def _conditional(covered: int, cases: int) -> str:
    return "-" if not cases else f"{covered / cases:.1%} of {cases}"


def coverage(videos: int, rate: float, clustered: bool, simulations: int, settings: Bootstrap) -> Cell:
    rng = np.random.default_rng([videos, int(rate * 1000), clustered])
    cell = Cell()
    # one resampler per cell: every benchmark has videos 0 .. videos - 1, so, as numbers over the same videos in
    # results/scores.csv, they share one set of resamples (drawn once: the cell's cost is then the products)
    resampler = Resampler(range(videos), settings, ("coverage", videos, rate, clustered))
    for _ in range(simulations):
        clusters, p_item = benchmark(rng, videos, rate, clustered)
        right = (rng.random(len(p_item)) < p_item).astype(float)
        found = resampler.interval(clusters, right)
        cell.add(found.low, found.high, rate, found.method, bool(np.all(right == right[0])))
    return cell


def trust_coverage(videos: int, rate: float, simulations: int, settings: Bootstrap) -> Cell:
    rng = np.random.default_rng([videos, int(rate * 1000), 3])
    truth = rate - (1 - rate) / 2
    cell = Cell()
    resampler = Resampler(range(videos), settings, ("trust", videos, rate))  # shared resamples, as in `coverage`
    for _ in range(simulations):
        clusters, p_item = benchmark(rng, videos, rate, True)
        right = rng.random(len(p_item)) < p_item
        values = np.where(right, 1.0, np.where(rng.random(len(p_item)) < 0.5, 0.0, -1.0))
        found = resampler.interval(clusters, values, bounds=(-1.0, 1.0))
        cell.add(found.low, found.high, truth, found.method, bool(np.all(values == values[0])))
    return cell


def paired_null(videos: int, rate: float, simulations: int, settings: Bootstrap) -> tuple[float, Cell]:
    """Two arms with the same per-video rates: the share of p < 0.05, and the interval's coverage of 0, mean width
    and methods."""
    rng = np.random.default_rng([videos, int(rate * 1000), 7])
    hits, cell = 0, Cell()
    resampler = Resampler(range(videos), settings, ("null", videos, rate))  # shared resamples, as in `coverage`
    for run in range(simulations):
        clusters, p_item = benchmark(rng, videos, rate, True)
        a, b = rng.random(len(p_item)) < p_item, rng.random(len(p_item)) < p_item
        paired = resampler.paired(clusters, a, b, ("null", run))
        hits += paired.p_value is not None and paired.p_value < 0.05
        cell.add(paired.ci_low, paired.ci_high, 0.0, paired.ci_method, not np.any(a != b))
    return hits / simulations, cell


def _used(methods: Counter, simulations: int) -> str:
    return ", ".join(f"{m} {n / simulations:.0%}" for m, n in methods.most_common())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--simulations", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--out", help="write the tables (markdown) here")
    args = parser.parse_args()
    settings = Bootstrap(args.resamples, 0)
    started, short = time.time(), []
    error = 100 * (0.95 * 0.05 / args.simulations) ** 0.5
    lines = [
        f"Coverage of the 95% interval ({args.simulations} benchmarks per cell, {args.resamples} resamples; Monte Carlo "
        f"error of a coverage near 95%: {error:.1f} points). Each cell: coverage (mean width; the methods used, most "
        "common first) | coverage in the fallback cases, every item right or every item wrong, of how many "
        f"benchmarks. The bootstrap (BCa) is used from {BCA_MIN_VIDEOS} videos on, where it is not narrower than the "
        "closed form:",
        "",
        "| items | videos | " + " | ".join(f"rate {rate} | fallback cases" for rate in RATES) + " |",
        "|---|---|" + "---|---|" * len(RATES),
    ]
    for clustered in (True, False):
        for videos in VIDEOS:
            cells = []
            for rate in RATES:
                cell = coverage(videos, rate, clustered, args.simulations, settings)
                cells.append(cell.text())
                short += [
                    f"accuracy, {'clustered' if clustered else 'independent'}, {videos} videos, rate {rate}: {low}" for low in cell.low()
                ]
            lines.append(f"| {'clustered' if clustered else 'independent'} | {videos} | " + " | ".join(cells) + " |")
            print(lines[-1], flush=True)
    lines += [
        "",
        f"The trust score's 95% interval (Kalai's scheme; clustered, a wrong item refused half the time; {args.simulations} "
        "benchmarks per cell): coverage of the true mean (mean width on the score's range -1 to 1; the methods used) | "
        "coverage where every item has the same value:",
        "",
        "| videos | " + " | ".join(f"rate {rate} | fallback cases" for rate in TRUST_RATES) + " |",
        "|---|" + "---|---|" * len(TRUST_RATES),
    ]
    for videos in VIDEOS:
        cells = []
        for rate in TRUST_RATES:
            cell = trust_coverage(videos, rate, args.simulations, settings)
            cells.append(cell.text())
            short += [f"trust score, {videos} videos, rate {rate}: {low}" for low in cell.low()]
        lines.append(f"| {videos} | " + " | ".join(cells) + " |")
        print(lines[-1], flush=True)
    lines += [
        "",
        f"Paired comparisons under no difference (clustered, both arms at the video's own rate; {args.simulations} pairs "
        "per cell): share of p < 0.05, and the interval's coverage of 0 (mean width; the methods used) | coverage where "
        "no item is discordant:",
        "",
        "| videos | rate | p < 0.05 | interval holds 0 | fallback cases |",
        "|---|---|---|---|---|",
    ]
    for videos in VIDEOS[:4]:
        for rate in PAIRED_RATES:
            p_share, cell = paired_null(videos, rate, args.simulations, settings)
            lines.append(f"| {videos} | {rate} | {p_share:.1%} | {cell.text()} |")
            short += [f"paired interval, {videos} videos, rate {rate}: {low}" for low in cell.low()]
            print(lines[-1], flush=True)
    lines += ["", "Below 93% (fallback cases counted where there were at least 20):", ""]
    lines += [f"- {line}" for line in short] or ["- none"]
    lines += ["", f"({time.time() - started:.0f} s on this machine.)"]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        path = Path(args.out)
        previous = path.read_text() if path.exists() else ""
        marker = "<!-- bench_coverage -->"
        head = previous.split(marker)[0] if marker in previous else previous
        path.write_text(f"{head}{marker}\n{text}")


if __name__ == "__main__":
    main()
