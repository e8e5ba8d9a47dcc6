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
interval (the fallback on its own intra-video correlation) as results/scores.csv's `trust_ci_*`.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path

import numpy as np

from virtuebench.support.bootstrap import Bootstrap, Resampler, intra_cluster_correlation

VIDEOS = (5, 12, 50, 200)
RATES = (0.5, 0.9, 0.97, 0.99)
TRUST_RATES = (0.5, 0.9, 0.97)  # the share of items right
PAIRED_RATES = (0.5, 0.9, 0.97)
CONCENTRATION = 4.0


def benchmark(rng: np.random.Generator, videos: int, rate: float, clustered: bool) -> tuple[np.ndarray, np.ndarray]:
    per_video = rng.integers(1, 8, size=videos)
    clusters = np.repeat(np.arange(videos), per_video)
    own = rng.beta(rate * CONCENTRATION, (1 - rate) * CONCENTRATION, size=videos) if clustered else np.full(videos, rate)
    return clusters, np.repeat(own, per_video)


def coverage(videos: int, rate: float, clustered: bool, simulations: int, settings: Bootstrap) -> tuple[float, float, Counter]:
    rng = np.random.default_rng([videos, int(rate * 1000), clustered])
    covered, widths, methods = 0, [], Counter()
    for run in range(simulations):
        clusters, p_item = benchmark(rng, videos, rate, clustered)
        right = (rng.random(len(p_item)) < p_item).astype(float)
        rho = intra_cluster_correlation([(clusters, right)])
        found = Resampler(clusters, settings, ("coverage", run), rho=rho).interval(clusters, right)
        covered += found.low <= rate <= found.high
        widths.append(found.high - found.low)
        methods[found.method] += 1
    return covered / simulations, float(np.mean(widths)), methods


def trust_coverage(videos: int, rate: float, simulations: int, settings: Bootstrap) -> tuple[float, float, Counter]:
    rng = np.random.default_rng([videos, int(rate * 1000), 3])
    truth = rate - (1 - rate) / 2
    covered, widths, methods = 0, [], Counter()
    for run in range(simulations):
        clusters, p_item = benchmark(rng, videos, rate, True)
        right = rng.random(len(p_item)) < p_item
        values = np.where(right, 1.0, np.where(rng.random(len(p_item)) < 0.5, 0.0, -1.0))
        rho = intra_cluster_correlation([(clusters, values)])
        found = Resampler(clusters, settings, ("trust", run), rho=rho).interval(clusters, values, bounds=(-1.0, 1.0))
        covered += found.low <= truth <= found.high
        widths.append(found.high - found.low)
        methods[found.method] += 1
    return covered / simulations, float(np.mean(widths)), methods


def paired_null(videos: int, rate: float, simulations: int, settings: Bootstrap) -> tuple[float, float, float, Counter]:
    """Two arms with the same per-video rates: the share of p < 0.05, and the interval's coverage of 0, mean width
    and methods. The paired fallback's correlation is estimated from the benchmark's differences."""
    rng = np.random.default_rng([videos, int(rate * 1000), 7])
    hits, covered, widths, methods = 0, 0, [], Counter()
    for run in range(simulations):
        clusters, p_item = benchmark(rng, videos, rate, True)
        a, b = rng.random(len(p_item)) < p_item, rng.random(len(p_item)) < p_item
        rho = intra_cluster_correlation([(clusters, a.astype(float) - b)])
        paired = Resampler(clusters, settings, ("null", run), rho=rho).paired(clusters, a, b, ("null", run))
        hits += paired.p_value is not None and paired.p_value < 0.05
        covered += paired.ci_low <= 0 <= paired.ci_high
        widths.append(paired.ci_high - paired.ci_low)
        methods[paired.ci_method] += 1
    return hits / simulations, covered / simulations, float(np.mean(widths)), methods


def _used(methods: Counter, simulations: int) -> str:
    return ", ".join(f"{m} {n / simulations:.0%}" for m, n in methods.most_common())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--simulations", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--out", help="write the tables (markdown) here")
    args = parser.parse_args()
    settings = Bootstrap(args.resamples, 0)
    started = time.time()
    lines = [
        f"Coverage of the 95% interval ({args.simulations} benchmarks per cell, {args.resamples} resamples; mean width in "
        "brackets; the methods used, most common first):",
        "",
        "| items | videos | " + " | ".join(f"rate {rate}" for rate in RATES) + " |",
        "|---|---|" + "---|" * len(RATES),
    ]
    for clustered in (True, False):
        for videos in VIDEOS:
            cells = []
            for rate in RATES:
                share, width, methods = coverage(videos, rate, clustered, args.simulations, settings)
                cells.append(f"{share:.1%} ({width:.2f}; {_used(methods, args.simulations)})")
            lines.append(f"| {'clustered' if clustered else 'independent'} | {videos} | " + " | ".join(cells) + " |")
            print(lines[-1], flush=True)
    lines += [
        "",
        f"The trust score's 95% interval (Kalai's scheme; clustered, a wrong item refused half the time; {args.simulations} "
        "benchmarks per cell): coverage of the true mean (mean width on the score's range -1 to 1; the methods used):",
        "",
        "| videos | " + " | ".join(f"rate {rate}" for rate in TRUST_RATES) + " |",
        "|---|" + "---|" * len(TRUST_RATES),
    ]
    for videos in VIDEOS[:3]:
        cells = []
        for rate in TRUST_RATES:
            share, width, methods = trust_coverage(videos, rate, args.simulations, settings)
            cells.append(f"{share:.1%} ({width:.2f}; {_used(methods, args.simulations)})")
        lines.append(f"| {videos} | " + " | ".join(cells) + " |")
        print(lines[-1], flush=True)
    lines += [
        "",
        f"Paired comparisons under no difference (clustered, both arms at the video's own rate; {args.simulations} pairs "
        "per cell): share of p < 0.05, and the interval's coverage of 0 (mean width; the methods used)",
        "",
        "| videos | rate | p < 0.05 | interval holds 0 |",
        "|---|---|---|---|",
    ]
    for videos in VIDEOS[:3]:
        for rate in PAIRED_RATES:
            p_share, share, width, methods = paired_null(videos, rate, args.simulations, settings)
            lines.append(f"| {videos} | {rate} | {p_share:.1%} | {share:.1%} ({width:.2f}; {_used(methods, args.simulations)}) |")
            print(lines[-1], flush=True)
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
