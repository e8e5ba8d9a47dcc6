"""Paired comparisons from judgment records: is a difference in Table 2 or Fig. 6 more than noise?

Two arms (a model under a prompt) are compared on the items both answered: the same instance at the
same level, so the difference is not muddled by which questions each arm saw (a sampled model's item: the mean of its
runs' correctness, so the differences may be fractions; virtuebench.support.paired tests them). The difference's
interval is a paired bootstrap over videos (Bonett-Price's on the differences' own CR2 cluster design below 50
videos or where wider, `ci_method`; virtuebench.support.bootstrap), its
p-value a randomization test over videos, exact (virtuebench.support.paired; `report.p_value`: conventional, the
default, or mid-p). Which pairs (docs/records.md#comparisons-resultscomparisonscsv):

- `prompt`: each model under the report's prompt against itself under every other prompt (Fig. 6);
- `adjacent`: each model against the next one in Table 2's order, under the report's prompt;
- `config`: the pairs `report.compare` names.

Many comparisons are made at once, so some p-values fall below 0.05 by chance (about 1 in 20 under no
difference): `p_holm` adjusts them (Holm) within a family, and `holds` is `p_holm < 0.05`. The family
(`report.holm_family`): `table` (the default) is every comparison of one kind in the table, all levels and
subsets together, so that under no difference anywhere the chance of any false "holds" among them stays under
5%; `level` is each (kind, level, subset), the rows a reader scans along one column, which finds more but
allows about one false "holds" per twenty such families. A comparison whose test cannot reach p < 0.05 whatever
its outcome (no discordant item, or discordant items on too few videos: 2/2^k > 0.05 for k <= 5 videos) cannot
be a false "holds", so it is left out of the family (Tarone 1990; `in_family`) and does not raise the others'
multiplier; `report.holm_tarone: false` keeps every row in.

CLI: python -m virtuebench.comparisons JUDGMENTS.jsonl ... --models M1 M2 ... --prompts honest plain
     --prompt honest --judge rules --resamples 2000 --seed 0 --holm-family table [--holm-tarone | --no-holm-tarone]
     [--p-value conventional|mid-p] --out results/comparisons.csv [--pair A B ...]
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

import numpy as np

from virtuebench.metrics import ALL_LEVELS, correct, in_subset, level_order, video_of
from virtuebench.provenance import stamp
from virtuebench.records import Judgment, RecordError
from virtuebench.support.bootstrap import Bootstrap, MissingDependency, Resampler, holm, require_scipy
from virtuebench.support.paired import P_VALUES, PValue
from virtuebench.support.stops import run_stoppable
from virtuebench.support.tabular import write_csv
from virtuebench.verify import add_chain_argument, read_judgments

#: The version of how comparisons.csv is computed (its test, Holm's family and intervals): a tracked param of
#: compare_arms (rules/report.smk), so comparisons made by an earlier method are made again after an update. Raise it
#: with any change to what comparisons.csv holds.
METHOD = "comparisons/5: closed-form intervals on each comparison's own CR2 cluster design (issue 49); exact paired test, Tarone's Holm family, intervals chosen by videos, a sampled model's runs averaged per item; row digests"

SUBSETS = ("overall", "non_refusal", "refusal")  # Table 2's subsets; Fig. 6 uses refusal
KINDS = ("prompt", "adjacent", "config")
ALPHA = 0.05


@dataclass(frozen=True)
class Arm:
    model: str
    prompt: str

    @classmethod
    def parse(cls, text: str, default_prompt: str) -> Arm:
        """`model` or `model:prompt`."""
        model, _, prompt = text.partition(":")
        return cls(model, prompt or default_prompt)


@dataclass(frozen=True)
class Comparison:
    kind: str
    judge: str
    level: str
    subset: str
    model_a: str
    prompt_a: str
    model_b: str
    prompt_b: str
    accuracy_a: float
    accuracy_b: float
    difference: float  # percentage points, a - b
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    p_method: str  # exact, or monte-carlo (non-integer differences on many videos only: never for 0/1 items)
    p_mc_se: float  # the p-value's Monte Carlo standard error; 0 where exact
    p_min: float  # the smallest p-value the test could give on these videos (2/2^k, k the discordant videos)
    in_family: bool  # in Holm's family: p_min <= 0.05 (or every row, report.holm_tarone false)
    p_holm: float | None  # None outside the family
    holds: bool
    near_alpha: bool  # `holds` would differ with Monte Carlo p-values two standard errors lower or higher
    n: int
    n_videos: int
    ci_method: str  # how the interval was made: bca, or bonett-price-cr2 (below 50 videos, or where wider)


@dataclass(frozen=True)
class _Items:
    """The items a comparison pairs, in one order: each one's video and whether each arm got it right."""

    videos: np.ndarray  # object: video ids
    right_a: np.ndarray  # float: correctness, or a sampled model's mean correctness over its runs
    right_b: np.ndarray

    def take(self, at: np.ndarray) -> _Items:
        return _Items(self.videos[at], self.right_a[at], self.right_b[at])


def pairs(models: Sequence[str], prompts: Sequence[str], prompt: str, extra: Iterable[tuple[Arm, Arm]] = ()) -> list[tuple[str, Arm, Arm]]:
    """(kind, a, b) for every comparison the report makes, without repeats."""
    chosen: list[tuple[str, Arm, Arm]] = []
    chosen += [("prompt", Arm(model, prompt), Arm(model, other)) for model in models for other in prompts if other != prompt]
    chosen += [("adjacent", Arm(a, prompt), Arm(b, prompt)) for a, b in zip(models, models[1:])]
    chosen += [("config", a, b) for a, b in extra]
    return list(dict.fromkeys(chosen))


HOLM_FAMILIES = ("table", "level")


def compare(
    judgments: Iterable[Judgment],
    chosen: Sequence[tuple[str, Arm, Arm]],
    judge: str,
    bootstrap: Bootstrap,
    holm_family: str = "table",
    p_value: PValue = "conventional",
    tarone: bool = True,
) -> tuple[list[Comparison], list[str]]:
    """The comparisons, and a note for each pair with no item in common. `p_value`: the test's definition
    (report.p_value); `tarone`: leave out of Holm's family the rows that cannot reach p < 0.05 (report.holm_tarone)."""
    # keyed by (model, prompt): a tuple hashes in C, a dataclass in Python (254,800 judgments at paper scale)
    by_arm: dict[tuple[str, str], dict[tuple[str, int], list[Judgment]]] = defaultdict(dict)
    universe, notes = set(), []
    for judgment in judgments:
        if judgment.judge == judge:
            by_arm[judgment.model, judgment.prompt].setdefault((judgment.instance_id, judgment.level), []).append(judgment)
            universe.add(video_of(judgment))
    chosen_items: list[tuple[str, str, str, Arm, Arm, _Items]] = []
    for kind, a, b in chosen:
        arm_a, arm_b = by_arm[a.model, a.prompt], by_arm[b.model, b.prompt]
        common = sorted(arm_a.keys() & arm_b.keys())
        if not common:
            notes.append(f"{kind}: {a.model}:{a.prompt} and {b.model}:{b.prompt} have no judged item in common (judge {judge})")
            continue
        # the pair's items once, as arrays; each (level, subset) row is a mask over them, in the same order
        first = [arm_a[key][0] for key in common]
        pair = _Items(
            np.array([video_of(judgment) for judgment in first], dtype=object),
            np.array([_mean_correct(arm_a[key]) for key in common], dtype=float),
            np.array([_mean_correct(arm_b[key]) for key in common], dtype=float),
        )
        item_levels = np.array([str(level) for _, level in common])
        in_subsets = {subset: np.array([in_subset(judgment, subset) for judgment in first], dtype=bool) for subset in SUBSETS}
        for level in sorted(set(item_levels.tolist()), key=level_order) + [ALL_LEVELS]:
            at_level = np.ones(len(common), dtype=bool) if level == ALL_LEVELS else item_levels == level
            for subset in SUBSETS:
                chosen_at = np.flatnonzero(at_level & in_subsets[subset])
                if len(chosen_at):
                    chosen_items.append((kind, level, subset, a, b, pair.take(chosen_at)))
    resampler = Resampler(universe, bootstrap, (judge, "videos"))  # each comparison over its own videos, as scores.csv
    rows = [_row(kind, judge, level, subset, a, b, items, resampler, p_value) for kind, level, subset, a, b, items in chosen_items]
    return _adjust(rows, holm_family, tarone), notes


def _mean_correct(runs: list[Judgment]) -> float:
    """An item's correctness: 0 or 1, or a sampled model's mean over its runs."""
    return sum(correct(judgment) for judgment in runs) / len(runs)


def _row(
    kind: str,
    judge: str,
    level: str,
    subset: str,
    a: Arm,
    b: Arm,
    items: _Items,
    resampler: Resampler,
    p_value: PValue = "conventional",
) -> Comparison:
    key = (kind, judge, level, subset, a.model, a.prompt, b.model, b.prompt)
    paired = resampler.paired(items.videos.tolist(), items.right_a, items.right_b, key, p_value)
    test = paired.test

    def percent(value: float | None) -> float | None:
        return None if value is None else round(100 * value, 4)

    return Comparison(
        kind,
        judge,
        level,
        subset,
        a.model,
        a.prompt,
        b.model,
        b.prompt,
        round(100 * float(items.right_a.sum()) / len(items.videos), 4),
        round(100 * float(items.right_b.sum()) / len(items.videos), 4),
        percent(paired.difference),
        percent(paired.ci_low),
        percent(paired.ci_high),
        None if paired.p_value is None else round(paired.p_value, 6),
        "none" if test is None else test.method,
        0.0 if test is None else round(test.p_mc_se, 6),
        1.0 if test is None else test.p_min,
        False,
        None,
        False,
        False,
        paired.n,
        paired.n_clusters,
        paired.ci_method,
    )


def _adjust(rows: list[Comparison], holm_family: str = "table", tarone: bool = True) -> list[Comparison]:
    """Holm within each family, over its rows that can reach p < ALPHA (all rows with `tarone` false); `near_alpha`
    where the verdict would change with every Monte Carlo p-value moved two standard errors down or up (Holm's
    adjusted p-values only rise with any raw one, so those two bound every verdict within two errors)."""
    if holm_family not in HOLM_FAMILIES:
        raise ValueError(f"report.holm_family: {holm_family!r} is not one of {', '.join(HOLM_FAMILIES)}")
    families: dict[tuple[str, ...], list[int]] = defaultdict(list)
    adjusted = list(rows)
    for index, row in enumerate(rows):
        if row.p_value is not None and (not tarone or row.p_min <= ALPHA):
            families[(row.kind,) if holm_family == "table" else (row.kind, row.level, row.subset)].append(index)
        else:
            adjusted[index] = replace(row, in_family=False, p_holm=None, holds=False, near_alpha=False)
    for members in families.values():
        raw = [rows[i].p_value or 0.0 for i in members]  # never None in a family
        lower = holm([max(0.0, p - 2 * rows[i].p_mc_se) for i, p in zip(members, raw)])
        upper = holm([min(1.0, p + 2 * rows[i].p_mc_se) for i, p in zip(members, raw)])
        for index, p, low, high in zip(members, holm(raw), lower, upper):
            row = rows[index]
            adjusted[index] = replace(
                row,
                in_family=True,
                p_holm=None if p is None else round(p, 6),
                holds=p is not None and p < ALPHA,
                near_alpha=low is not None and high is not None and (low < ALPHA) != (high < ALPHA),
            )
    return adjusted


def write_comparisons(rows: Sequence[Comparison], path: str | Path) -> None:
    write_csv(path, (asdict(row) for row in rows), [f.name for f in fields(Comparison)])


def read_comparisons(path: str | Path) -> list[dict[str, str]]:
    with Path(path).open(newline="") as handle:
        return list(csv.DictReader(handle))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m virtuebench.comparisons", description=__doc__.split("\n\n")[0])
    parser.add_argument("judgments", nargs="+")
    parser.add_argument("--models", nargs="+", required=True, help="in Table 2's order")
    parser.add_argument("--prompts", nargs="+", required=True)
    parser.add_argument("--prompt", required=True, help="the report's prompt (Tables 1 and 2)")
    parser.add_argument("--judge", required=True)
    parser.add_argument("--pair", nargs=2, action="append", default=[], metavar=("A", "B"), help="an extra pair: model or model:prompt")
    parser.add_argument("--resamples", type=int, required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--holm-family", choices=HOLM_FAMILIES, required=True, help="report.holm_family")
    parser.add_argument(
        "--holm-tarone",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="report.holm_tarone: leave out of Holm's family the rows that cannot reach p < 0.05 (default: yes)",
    )
    parser.add_argument("--p-value", choices=P_VALUES, default="conventional", help="report.p_value (default: conventional)")
    parser.add_argument("--out", required=True)
    add_chain_argument(parser)
    args = parser.parse_args(argv)
    try:
        bootstrap = Bootstrap(args.resamples, args.seed)
    except ValueError as error:
        parser.error(str(error))
    extra = [(Arm.parse(a, args.prompt), Arm.parse(b, args.prompt)) for a, b in args.pair]
    try:
        require_scipy()
        judgments = read_judgments(args.judgments, args.chain_root)
    except (RecordError, MissingDependency) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    chosen = pairs(args.models, args.prompts, args.prompt, extra)
    rows, notes = compare(judgments, chosen, args.judge, bootstrap, args.holm_family, args.p_value, args.holm_tarone)
    write_comparisons(rows, args.out)
    stamp(args.out)  # each row's judgments digest and its own (virtuebench.provenance)
    for note in notes:
        print(f"WARNING: {note}", file=sys.stderr)
    holding, tested, near = sum(row.holds for row in rows), sum(row.in_family for row in rows), sum(row.near_alpha for row in rows)
    print(
        f"comparisons: {len(rows)} rows, {tested} in Holm's families, {holding} hold after Holm's adjustment"
        + (f" ({near} within two Monte Carlo errors of 0.05)" if near else "")
        + f" -> {args.out}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    # Ctrl-C or SIGTERM: one line, no traceback (its outputs are not written whole; Snakemake removes them)
    sys.exit(run_stoppable(lambda stop: main()))
