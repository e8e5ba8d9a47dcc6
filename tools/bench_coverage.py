"""Coverage of the report's 95% intervals, and the paired test's false-positive rate, on simulated benchmarks with
a known truth, checked through the scores CLI (`python -m virtuebench.metrics`) on generated judgments files;
docs/statistics.md holds the last run's tables.

    .venv/bin/python tools/bench_coverage.py [--seed 0] [--seeds 2] [--simulations 2000] [--resamples 2000]
        [--cells 'unequal-*,icc*'] [--via auto|cli|functions] [--jobs 2] [--out docs/statistics.md]

A cell is one design of benchmark (`Design`): videos with their questions, each video's own rate drawn from a Beta
with the cell's mean rate and concentration c (intra-video correlation 1 / (1 + c): c = 4 gives 0.2, c = 0.5 gives
0.67, as the issue's Beta(0.45, 0.05)), or every item at the mean rate (`independent`). Each item is right with its
video's rate; a wrong item is refused half the time, so each benchmark gives both accuracy and the trust score
(Kalai's scheme, t = 0.5: right 1, refused 0, wrong -1; truth 1.5 x accuracy's truth - 0.5). The designs:
- `grid-*`: 5 to 200 videos of 1-7 questions each (as VirtueBench), c = 4 or independent, rates 0.5-0.99.
- `unequal-*`: one video holding a third of the items (at 10 videos the issue's 25, 10, 5, 3, 2, 1, 1, 1, 1, 1),
  a tenth of the videos with 2-10 questions, the rest single questions (as MLVU's dev set, 2,169 questions over
  1,242 videos, and LongVideoBench, 976 over 395).
- `icc0.67-*`: the 1-7 questions per video of the grid with c = 0.5.
- `informative-*`: size-informative difficulty: a video's mean rate falls linearly in log(size) from 0.95 (one
  question) to 0.65 (the largest video of the design); the truth is then the expected item-weighted rate
  sum_g m_g r(m_g) / n of the benchmark's own sizes.
- `levels5-*`: the same questions at five frame levels: each question's own rate drawn from a Beta (concentration 4)
  around its video's, each level right with the question's rate, so correctness is correlated across levels and
  within the video; the number is the pooled `all` row (clustered by video).
Every cell also reports the coverage among the benchmarks with at least one error (the all-correct benchmarks
left out, their count given): at rate 0.99 most benchmarks are all correct, and their intervals cover the truth
almost always, which props up the overall figure.

The paired interval and test (`paired-*`): two arms drawn from the same per-video rates (no difference) on the grid
and the hard designs; the false-positive rate is the share of p < 0.05, the interval's coverage the share holding 0.

`--via cli` writes one judgments file per batch of benchmarks (each benchmark a distinct `model`, the same
videos), runs the scores CLI on it once and reads each benchmark's row (its level, or `all` for five levels;
subset overall) from scores.csv; `--via functions` computes the same numbers in process from the functions the CLI
uses (virtuebench.support.bootstrap), grouped as the CLI groups them (one resampler over the batch's videos, so the
benchmarks of a cell share one set of resamples, as numbers over the same videos do in results/scores.csv), and
rounds them as scores.csv does: the two give the same digits (tests/support/test_bench_coverage.py). `auto` (the
default) takes the CLI for the hard designs and the functions for the grid and the paired cells (the CLI reads about
25,000 judgments a second: the grid's 40 cells through it would take about 30 minutes of CPU). The Monte Carlo standard
error of each coverage c over its benchmarks is sqrt(c (1 - c) / benchmarks). `--seeds 2` runs every cell at seeds
`--seed` and `--seed` + 1 (each cell's generator and the bootstrap's seed derive from it), side by side.
"""

from __future__ import annotations

import argparse
import csv
import fnmatch
import hashlib
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from contextlib import nullcontext
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path

import numpy as np

from virtuebench.records import Judgment
from virtuebench.support.bootstrap import BCA_MIN_VIDEOS, Bootstrap, Number, Resampler

MARKER = "<!-- bench_coverage -->"
JUDGE, PROMPT, CATEGORY = "rules", "plain", "synthetic"
LEVELS = (64, 128, 256, 512, 1024)
TRUST_BOUNDS = (-1.0, 1.0)  # Kalai's scheme at t = 0.5: a wrong answer -1, a refusal 0, a right answer 1
TRUST_ARGUMENTS = ("--trust-scheme", "kalai", "--confidence-target", "0.5", "--wrong-answer", "-1", "--unwarranted-refusal", "0")
#: What counts in a number, at the workflow's defaults (config report.invalid, report.categories): the CLI asks for both.
SCORING_ARGUMENTS = ("--invalid", "wrong", "--categories", "{}")
QUESTION_CONCENTRATION = 4.0  # levels5: a question's rate around its video's
INFORMATIVE_TOP, INFORMATIVE_DROP = 0.95, 0.30  # informative: 0.95 at one question, 0.65 at the largest video
ISSUE_SIZES = (25, 10, 5, 3, 2, 1, 1, 1, 1, 1)
MIDDLE_SIZES = (10, 8, 6, 5, 4, 3, 3, 2, 2, 2)
#: Judgments per CLI run (and per in-process batch, grouped as the CLI groups them): the CLI held 231 MB for 100,000.
BATCH_JUDGMENTS = 150_000
LOW = 0.93  # cells below this are listed
GRID_VIDEOS = (5, 12, 25, 50, 200)
GRID_RATES = (0.5, 0.9, 0.97, 0.99)


def unequal_sizes(videos: int) -> tuple[int, ...]:
    """One video holding a third of the items, a tenth of the videos with 2-10 questions, the rest single questions
    (2 questions a video on average: MLVU's dev set has 1.75, LongVideoBench 2.5); at 10 videos the issue's sizes."""
    if videos == len(ISSUE_SIZES):
        return ISSUE_SIZES
    middle = [MIDDLE_SIZES[at % len(MIDDLE_SIZES)] for at in range(videos // 10)]
    singles = videos - 1 - len(middle)
    return ((sum(middle) + singles) // 2, *middle, *([1] * singles))


@dataclass(frozen=True)
class Design:
    """A cell: how its benchmarks are drawn (module docstring)."""

    name: str
    videos: int
    rate: float  # the mean rate (informative: a single question's)
    concentration: float | None  # of the video rates' Beta; None: independent items
    sizes: tuple[int, ...] | None = None  # items per video, fixed; None: 1-7 drawn per benchmark
    informative: bool = False
    levels: int = 1
    hard: bool = False  # through the CLI under --via auto

    @property
    def icc(self) -> float:
        return 0.0 if self.concentration is None else 1 / (1 + self.concentration)

    def described(self) -> str:
        sizes = "1-7 per video" if self.sizes is None else f"sizes {_sizes_text(self.sizes)}"
        parts = [sizes, f"ICC {self.icc:.2f}" if self.concentration is not None else "independent"]
        if self.informative:
            parts.append(f"rate {INFORMATIVE_TOP} at 1 question to {INFORMATIVE_TOP - INFORMATIVE_DROP:.2f} at the largest")
        if self.levels > 1:
            parts.append(f"{self.levels} levels, pooled `all`")
        return "; ".join(parts)

    def mean_rates(self, sizes: np.ndarray) -> np.ndarray:
        """Each video's mean rate given its size."""
        if not self.informative:
            return np.full(len(sizes), self.rate)
        largest = max(self.sizes) if self.sizes is not None else 7
        return self.rate - INFORMATIVE_DROP * np.log(sizes) / np.log(largest)


def _sizes_text(sizes: tuple[int, ...]) -> str:
    counted = Counter(sizes)
    return ", ".join(f"{size}" if count == 1 else f"{size} x{count}" for size, count in sorted(counted.items(), reverse=True))


def designs() -> list[Design]:
    """Every accuracy-and-trust cell: the grid, then the hard designs."""
    found = [
        Design(f"grid-{'clustered' if clustered else 'independent'}-{videos}-{rate}", videos, rate, 4.0 if clustered else None)
        for clustered in (True, False)
        for videos in GRID_VIDEOS
        for rate in GRID_RATES
    ]
    for videos in (10, 50, 200):
        for concentration, rate in ((0.5, 0.9), (0.5, 0.5), (4.0, 0.9), (0.5, 0.99)):
            if videos == 200 and concentration == 4.0 or videos > 10 and rate in (0.5, 0.99):
                continue  # kept to the designs the issue names, within the time budget
            icc = 1 / (1 + concentration)
            found.append(Design(f"unequal-{videos}-icc{icc:.2f}-{rate}", videos, rate, concentration, unequal_sizes(videos), hard=True))
    for videos, rate in ((12, 0.5), (12, 0.9), (50, 0.9), (12, 0.99)):
        found.append(Design(f"icc0.67-{videos}-{rate}", videos, rate, 0.5, hard=True))
    found.append(Design("informative-12", 12, INFORMATIVE_TOP, 4.0, informative=True, hard=True))
    found.append(Design("informative-unequal-50", 50, INFORMATIVE_TOP, 4.0, unequal_sizes(50), informative=True, hard=True))
    found.append(Design("levels5-12-0.9", 12, 0.9, 4.0, levels=5, hard=True))
    return found


def paired_designs() -> list[Design]:
    found = [Design(f"paired-grid-{videos}-{rate}", videos, rate, 4.0) for videos in GRID_VIDEOS[:4] for rate in (0.5, 0.9, 0.97)]
    found += [
        Design("paired-unequal-10-icc0.67-0.9", 10, 0.9, 0.5, ISSUE_SIZES),
        Design("paired-unequal-50-icc0.67-0.9", 50, 0.9, 0.5, unequal_sizes(50)),
        Design("paired-icc0.67-12-0.9", 12, 0.9, 0.5),
        Design("paired-informative-unequal-50", 50, INFORMATIVE_TOP, 4.0, unequal_sizes(50), informative=True),
    ]
    return found


@dataclass
class Benchmark:
    """One simulated benchmark: per item its video, level (position in LEVELS), question, the chance it is right,
    its correctness and trust score; its true accuracy."""

    video: np.ndarray
    level: np.ndarray
    question: np.ndarray
    rate: np.ndarray
    right: np.ndarray
    value: np.ndarray
    truth: float

    @property
    def trust_truth(self) -> float:
        return 1.5 * self.truth - 0.5  # right 1, wrong refused (0) or answered (-1) with equal chance


def draw(design: Design, rng: np.random.Generator) -> Benchmark:
    sizes = np.array(design.sizes) if design.sizes is not None else rng.integers(1, 8, size=design.videos)
    mean = design.mean_rates(sizes)
    if design.concentration is None:
        own = mean
    else:
        own = rng.beta(mean * design.concentration, (1 - mean) * design.concentration)
    video = np.repeat(np.arange(len(sizes)), sizes)
    rate = own[video]
    question = np.arange(len(video))
    level = np.zeros(len(video), dtype=np.int64)
    if design.levels > 1:  # each question asked at every level, its own rate around its video's
        centre = np.clip(rate, 1e-9, 1 - 1e-9)
        rate = np.repeat(rng.beta(centre * QUESTION_CONCENTRATION, (1 - centre) * QUESTION_CONCENTRATION), design.levels)
        video, question = np.repeat(video, design.levels), np.repeat(question, design.levels)
        level = np.tile(np.arange(design.levels), len(question) // design.levels)
    right = rng.random(len(rate)) < rate
    refused = ~right & (rng.random(len(rate)) < 0.5)
    value = np.where(right, 1.0, np.where(refused, 0.0, -1.0))
    return Benchmark(video, level, question, rate, right, value, float((sizes * mean).sum() / sizes.sum()))


def generator(design: Design, seed: int) -> np.random.Generator:
    """The cell's generator: from the study's seed and the cell's name, so a subset of cells draws the same."""
    return np.random.default_rng([seed, int.from_bytes(hashlib.sha256(design.name.encode()).digest()[:8], "little")])


def batches(design: Design, simulations: int, rng: np.random.Generator) -> list[list[Benchmark]]:
    drawn = [draw(design, rng) for _ in range(simulations)]
    per = max(1, BATCH_JUDGMENTS // max(1, int(np.mean([len(b.right) for b in drawn]))))
    return [drawn[at : at + per] for at in range(0, len(drawn), per)]


def video_name(video: int) -> str:
    return f"v{video}"


def percent(value: float | None) -> float | None:
    """As scores.csv rounds an interval's end (virtuebench.metrics: 100 x the fraction, 4 decimals)."""
    return None if value is None else round(100 * value, 4)


Found = tuple[float | None, float | None, str]  # (low, high) in percent and the method


def function_intervals(batch: list[Benchmark], settings: Bootstrap) -> list[tuple[Found, Found]]:
    """Each benchmark's accuracy and trust intervals from the functions the scores CLI calls, grouped as
    virtuebench.metrics.compute_scores groups a judgments file with one model per benchmark: one resampler over the
    judge's videos, each number's closed form on its own cluster design."""
    videos = sorted({int(v) for bench in batch for v in np.unique(bench.video)})
    resampler = Resampler([video_name(v) for v in videos], settings, (JUDGE, "videos"))
    position = np.full(max(videos) + 1, -1, dtype=np.int64)
    position[videos] = resampler.codes([video_name(v) for v in videos])
    codes = [position[bench.video] for bench in batch]
    numbers = []
    for coded, bench in zip(codes, batch):
        numbers.append(Number(coded, bench.right.astype(float), coded=True))
        numbers.append(Number(coded, bench.value, bounds=TRUST_BOUNDS, coded=True))
    found = resampler.intervals(numbers)
    return [
        ((percent(a.low), percent(a.high), a.method), (percent(t.low), percent(t.high), t.method)) for a, t in zip(found[::2], found[1::2])
    ]


def _template() -> dict:
    """A judgment record's members in their order, with their defaults (the fields every benchmark item shares)."""
    record = {f.name: None if f.default is MISSING else f.default for f in fields(Judgment) if f.name != "sample"}
    record |= {"prompt": PROMPT, "judge": JUDGE, "category": CATEGORY, "task_type": CATEGORY, "answer": "x", "is_unanswerable": False}
    return record | {"response": "r", "valid": True, "reason": "", "fingerprint": "bench_coverage"}


def write_judgments(batch: list[Benchmark], path: Path) -> None:
    """A judgments file (docs/records.md) holding every benchmark of `batch` as a model of its own (`b00000`, ...)."""
    record = _template()
    with path.open("w") as handle:
        for at, bench in enumerate(batch):
            record["model"] = f"b{at:05d}"
            for video, level, question, right, value in zip(
                bench.video.tolist(), bench.level.tolist(), bench.question.tolist(), bench.right.tolist(), bench.value.tolist()
            ):
                record |= {"instance_id": f"q{question}", "level": LEVELS[level], "video_id": video_name(video)}
                record |= {"judgement": int(right), "refusal": int(value == 0.0)}
                handle.write(json.dumps(record) + "\n")


def cli_intervals(batch: list[Benchmark], settings: Bootstrap, folder: Path) -> list[tuple[Found, Found]]:
    """Each benchmark's accuracy and trust intervals as `python -m virtuebench.metrics` writes them to scores.csv."""
    judgments, scores = folder / "judgments.jsonl", folder / "scores.csv"
    write_judgments(batch, judgments)
    command = [sys.executable, "-m", "virtuebench.metrics", str(judgments), "--out", str(scores)]
    command += ["--resamples", str(settings.resamples), "--seed", str(settings.seed), *TRUST_ARGUMENTS, *SCORING_ARGUMENTS]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"the scores CLI failed on {judgments} (exit {run.returncode}): {run.stderr.strip()[-2000:]}")
    level = str(LEVELS[0]) if len(np.unique(batch[0].level)) == 1 else "all"
    rows = {}
    with scores.open(newline="") as handle:
        for row in csv.DictReader(handle):
            if row["level"] == level and row["subset"] == "overall":
                rows[row["model"]] = row
    found = []
    for at in range(len(batch)):
        row = rows[f"b{at:05d}"]
        found.append(
            (
                (_number(row["ci_low"]), _number(row["ci_high"]), row["ci_method"]),
                (_number(row["trust_ci_low"]), _number(row["trust_ci_high"]), row["trust_ci_method"]),
            )
        )
    return found


def _number(text: str) -> float | None:
    return None if text == "" else float(text)


@dataclass
class Tally:
    """Coverage of one number over a cell's benchmarks: how many, how many covered, widths, methods; and the same
    over the benchmarks with at least one error."""

    benchmarks: int = 0
    covered: int = 0
    widths: list[float] = field(default_factory=list)
    methods: Counter = field(default_factory=Counter)
    with_error: int = 0
    with_error_covered: int = 0

    def add(self, found: Found, truth_percent: float, has_error: bool) -> None:
        low, high, method = found
        holds = low is not None and high is not None and low <= truth_percent <= high
        self.benchmarks += 1
        self.covered += holds
        self.widths.append(float("nan") if low is None or high is None else (high - low) / 100)
        self.methods[method] += 1
        self.with_error += has_error
        self.with_error_covered += holds and has_error

    @property
    def coverage(self) -> float:
        return self.covered / self.benchmarks

    @property
    def error_coverage(self) -> float | None:
        return self.with_error_covered / self.with_error if self.with_error else None


def monte_carlo_se(share: float, benchmarks: int) -> float:
    return math.sqrt(share * (1 - share) / benchmarks)


@dataclass
class CellResult:
    design: Design
    seed: int
    via: str
    accuracy: Tally
    trust: Tally
    truth: float  # mean over the benchmarks (informative designs with drawn sizes vary)
    seconds: float


def run_cell(design: Design, seed: int, simulations: int, resamples: int, via: str) -> CellResult:
    started = time.perf_counter()
    settings = Bootstrap(resamples, seed)
    accuracy, trust, truths = Tally(), Tally(), []
    with tempfile.TemporaryDirectory(prefix="bench_coverage_") as folder:
        for batch in batches(design, simulations, generator(design, seed)):
            found = cli_intervals(batch, settings, Path(folder)) if via == "cli" else function_intervals(batch, settings)
            for bench, (accuracy_found, trust_found) in zip(batch, found):
                has_error = not bool(bench.right.all())
                accuracy.add(accuracy_found, 100 * bench.truth, has_error)
                trust.add(trust_found, 100 * bench.trust_truth, has_error)
                truths.append(bench.truth)
    return CellResult(design, seed, via, accuracy, trust, float(np.mean(truths)), time.perf_counter() - started)


@dataclass
class PairedResult:
    design: Design
    seed: int
    rejections: int
    interval: Tally
    seconds: float


def run_paired(design: Design, seed: int, simulations: int, resamples: int) -> PairedResult:
    """Two arms from the same per-video rates: the share of p < 0.05, and the interval's coverage of 0."""
    started = time.perf_counter()
    rng = generator(design, seed)
    settings = Bootstrap(resamples, seed)
    hits, tally = 0, Tally()
    resampler = None
    for run in range(simulations):
        first = draw(design, rng)
        second_right = rng.random(len(first.rate)) < first.rate  # the other arm at the same item rates
        names = [video_name(v) for v in first.video.tolist()]
        if resampler is None or set(names) != resampler.universe:
            resampler = Resampler(names, settings, ("null", design.name))
        paired = resampler.paired(names, first.right, second_right, ("null", run))
        hits += paired.p_value is not None and paired.p_value < 0.05
        low, high = percent(paired.ci_low), percent(paired.ci_high)
        tally.add((low, high, paired.ci_method), 0.0, bool(np.any(first.right != second_right)))
    return PairedResult(design, seed, hits, tally, time.perf_counter() - started)


def _share(share: float | None, benchmarks: int) -> str:
    if share is None:
        return "-"
    return f"{share:.1%} ± {100 * monte_carlo_se(share, benchmarks):.1f}"


def _methods(methods: Counter) -> str:
    total = sum(methods.values())
    return ", ".join(f"{method} {count / total:.0%}" for method, count in methods.most_common())


def _items(design: Design) -> str:
    if design.sizes is not None:
        return str(sum(design.sizes) * design.levels)
    return f"~{4 * design.videos * design.levels}"


def _given_error(tally: Tally) -> str:
    all_correct = tally.benchmarks - tally.with_error
    if not all_correct:
        return "-"
    return f"{_share(tally.error_coverage, tally.with_error)} of {tally.with_error} ({all_correct} all right)"


def _listed(design: Design) -> str:
    return "functions" if design.name.startswith("paired") else "cli" if design.hard else "functions"


def render(cells: list[CellResult], paired: list[PairedResult], seeds: list[int], simulations: int, resamples: int) -> list[str]:
    """The markdown tables and the list of cells below 93%."""
    by_cell = {(result.design.name, result.seed): result for result in cells}
    names = list(dict.fromkeys(result.design.name for result in cells))
    at = " and ".join(str(seed) for seed in seeds)
    lines, low = [], []
    if names:
        lines += [
            f"Accuracy and the trust score (Kalai, t = 0.5): coverage of the 95% interval ± its Monte Carlo standard error "
            f"(points) at seeds {at}, {simulations} benchmarks per cell, {resamples} resamples. `via`: cli, read from the "
            "scores CLI's scores.csv; functions, the same functions in process. width: the accuracy interval's mean width "
            f"(seed {seeds[0]}); methods: accuracy's (seed {seeds[0]}; the bootstrap, BCa, from {BCA_MIN_VIDEOS} videos on "
            "where it is not narrower than the closed form). Given ≥ 1 error: accuracy's coverage among the benchmarks "
            "with at least one wrong item (how many; the all-right ones left out), per seed:",
            "",
            "| cell | design | videos | items | truth | via | "
            + " | ".join(f"accuracy, seed {seed}" for seed in seeds)
            + " | width | methods | given ≥ 1 error | "
            + " | ".join(f"trust, seed {seed}" for seed in seeds)
            + " |",
            "|---|---|---|---|---|---|" + "---|" * len(seeds) + "---|---|---|" + "---|" * len(seeds),
        ]
        for name in names:
            results = [by_cell[(name, seed)] for seed in seeds]
            first, design = results[0], results[0].design
            accuracy = [_share(r.accuracy.coverage, r.accuracy.benchmarks) for r in results]
            trust = [_share(r.trust.coverage, r.trust.benchmarks) for r in results]
            given = "; ".join(_given_error(r.accuracy) for r in results)
            given = "-" if set(given.split("; ")) == {"-"} else given
            width = float(np.nanmean(first.accuracy.widths))
            truth = f"{first.truth:.3f}" + (" (mean)" if design.informative and design.sizes is None else "")
            lines.append(
                f"| {name} | {design.described()} | {design.videos} | {_items(design)} | {truth} | {first.via} | "
                + " | ".join(accuracy)
                + f" | {width:.2f} | {_methods(first.accuracy.methods)} | {given} | "
                + " | ".join(trust)
                + " |"
            )
            for result in results:
                where = f"{name} ({result.design.described()}), seed {result.seed}"
                if result.accuracy.coverage < LOW:
                    low.append(f"accuracy, {where}: {_share(result.accuracy.coverage, result.accuracy.benchmarks)}")
                if result.trust.coverage < LOW:
                    low.append(f"trust score, {where}: {_share(result.trust.coverage, result.trust.benchmarks)}")
                share = result.accuracy.error_coverage
                if (
                    share is not None
                    and result.accuracy.with_error >= 20
                    and share < LOW
                    and result.accuracy.with_error < result.accuracy.benchmarks
                ):
                    low.append(f"accuracy given ≥ 1 error, {where}: {_given_error(result.accuracy)}")
    paired_names = list(dict.fromkeys(result.design.name for result in paired))
    if paired_names:
        by_pair = {(result.design.name, result.seed): result for result in paired}
        lines += [
            "",
            f"Paired comparisons under no difference (both arms right at the same item rates; {simulations} pairs per cell, "
            f"functions): share of p < 0.05 (the exact randomization test, conventional p) and the interval's coverage of 0, "
            f"each ± its Monte Carlo standard error, at seeds {at}; width and methods at seed {seeds[0]}:",
            "",
            "| cell | design | videos | "
            + " | ".join(f"p < 0.05, seed {seed}" for seed in seeds)
            + " | "
            + " | ".join(f"interval holds 0, seed {seed}" for seed in seeds)
            + " | width | methods |",
            "|---|---|---|" + "---|" * (2 * len(seeds)) + "---|---|",
        ]
        for name in paired_names:
            results = [by_pair[(name, seed)] for seed in seeds]
            design = results[0].design
            rejections = [_share(r.rejections / r.interval.benchmarks, r.interval.benchmarks) for r in results]
            holds = [_share(r.interval.coverage, r.interval.benchmarks) for r in results]
            width = float(np.nanmean(results[0].interval.widths))
            lines.append(
                f"| {name} | {design.described()}, rate {design.rate} | {design.videos} | "
                + " | ".join(rejections + holds)
                + f" | {width:.2f} | {_methods(results[0].interval.methods)} |"
            )
            for result in results:
                where = f"{name} ({design.described()}, rate {design.rate}), seed {result.seed}"
                if result.interval.coverage < LOW:
                    low.append(f"paired interval, {where}: {_share(result.interval.coverage, result.interval.benchmarks)}")
                rate = result.rejections / result.interval.benchmarks
                if rate - 2 * monte_carlo_se(rate, result.interval.benchmarks) > 0.05:
                    low.append(f"paired test rejects too often, {where}: {_share(rate, result.interval.benchmarks)}")
    lines += ["", f"Below {LOW:.0%} (and paired tests rejecting more than 5% by over two standard errors):", ""]
    lines += [f"- {line}" for line in low] or ["- none"]
    return lines


def selected(patterns: str | None, names: list[str]) -> set[str]:
    if not patterns:
        return set(names)
    wanted = [pattern.strip() for pattern in patterns.split(",") if pattern.strip()]
    return {name for name in names if any(fnmatch.fnmatchcase(name, pattern) for pattern in wanted)}


def _task(task: tuple) -> CellResult | PairedResult:
    kind, design, seed, simulations, resamples, via = task
    if kind == "paired":
        return run_paired(design, seed, simulations, resamples)
    return run_cell(design, seed, simulations, resamples, via)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0, help="the study's seed: every cell's generator and resamples derive from it")
    parser.add_argument("--seeds", type=int, default=2, help="run every cell at this many seeds from --seed on, side by side")
    parser.add_argument("--simulations", type=int, default=2000, help="benchmarks per cell and seed")
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument(
        "--cells", help="comma-separated glob patterns of the cells to run (default: all), e.g. 'unequal-*,paired-grid-12-*'"
    )
    parser.add_argument("--via", choices=("auto", "cli", "functions"), default="auto", help="auto: the CLI for the hard designs")
    parser.add_argument("--jobs", type=int, default=2, help="cells run at once (processes)")
    parser.add_argument("--out", help="write the tables (markdown) after the marker in this file")
    parser.add_argument("--list", action="store_true", help="list the cells and exit")
    args = parser.parse_args(argv)
    every, pairs = designs(), paired_designs()
    names = [design.name for design in every + pairs]
    if args.list:
        print("\n".join(f"{design.name}: {design.described()}" for design in every + pairs))
        return 0
    chosen = selected(args.cells, names)
    if not chosen:
        parser.error(f"--cells {args.cells!r} matches no cell (--list lists them)")
    if args.out and args.cells:
        parser.error("--out writes the whole study's tables: leave out --cells")
    if args.simulations < 1 or args.seeds < 1 or args.jobs < 1:
        parser.error("--simulations, --seeds and --jobs must be at least 1")
    seeds = [args.seed + at for at in range(args.seeds)]
    tasks = []
    for design in every:
        if design.name in chosen:
            via = args.via if args.via != "auto" else ("cli" if design.hard else "functions")
            tasks += [("cell", design, seed, args.simulations, args.resamples, via) for seed in seeds]
    tasks += [("paired", d, seed, args.simulations, args.resamples, "functions") for d in pairs if d.name in chosen for seed in seeds]
    started, load = time.time(), os.getloadavg()[0]
    # the costliest first (the CLI's and the big designs'), so that the processes finish together
    order = sorted(range(len(tasks)), key=lambda at: -_cost(tasks[at]))
    results: list = [None] * len(tasks)
    with ProcessPoolExecutor(max_workers=args.jobs) if args.jobs > 1 else nullcontext() as pool:
        done = pool.map(_task, [tasks[at] for at in order]) if pool is not None else map(_task, [tasks[at] for at in order])
        for at, result in zip(order, done):
            results[at] = result
            print(f"{result.design.name} seed {result.seed}: {result.seconds:.1f} s", file=sys.stderr, flush=True)
    cells = [result for result in results if isinstance(result, CellResult)]
    paired = [result for result in results if isinstance(result, PairedResult)]
    elapsed = time.time() - started
    used = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]  # the pool's workers reaped
    cpu = sum(usage.ru_utime + usage.ru_stime for usage in used)
    lines = render(cells, paired, seeds, args.simulations, args.resamples)
    lines += [
        "",
        f"({elapsed:.0f} s on this machine ({cpu:.0f} s CPU, the scores CLI's included) with {args.jobs} processes, load average {load:.1f} at the start and "
        f"{os.getloadavg()[0]:.1f} at the end; {time.strftime('%Y-%m-%d', time.gmtime())}.)",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        path = Path(args.out)
        previous = path.read_text() if path.exists() else ""
        head = previous.split(MARKER)[0] if MARKER in previous else previous
        path.write_text(f"{head}{MARKER}\n{text}")
    return 0


def _cost(task: tuple) -> float:
    """A rough cost: items per benchmark, the CLI's about ten times the functions'."""
    kind, design, _, simulations, _, via = task
    items = (sum(design.sizes) if design.sizes is not None else 4 * design.videos) * design.levels
    return simulations * items * (10 if via == "cli" else 1) * (3 if kind == "paired" else 1)


if __name__ == "__main__":
    sys.exit(main())
