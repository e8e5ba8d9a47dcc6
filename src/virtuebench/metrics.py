"""Scores from judgment records: one row per number any table or figure shows, with its counts.

Accuracy is over all items of a subset; an invalid judgment (no response, or no verdict) counts as
wrong and is also counted in `n_invalid`, so nothing is dropped or silently scored. Level `all`
pools every level a model was run at (used by Fig. 6).

CLI: python -m virtuebench.metrics JUDGMENTS.jsonl ... --out results/scores.csv
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from virtuebench.records import Judgment, load_records
from virtuebench.support.tabular import write_csv

SUBSETS = ("overall", "non_refusal", "refusal", "perception", "reasoning")
ALL_LEVELS = "all"


@dataclass(frozen=True)
class Score:
    model: str
    prompt: str
    level: str  # a frame level, or "all"
    subset: str
    accuracy: float  # percent
    n_correct: int
    n: int
    n_invalid: int
    judge: str


def in_subset(judgment: Judgment, subset: str) -> bool:
    if subset == "overall":
        return True
    if subset == "refusal":
        return judgment.is_unanswerable
    if subset == "non_refusal":
        return not judgment.is_unanswerable
    return judgment.category == subset


def compute_scores(judgments: Iterable[Judgment]) -> list[Score]:
    groups: dict[tuple[str, str, str, str], list[Judgment]] = defaultdict(list)
    for judgment in judgments:
        groups[(judgment.judge, judgment.model, judgment.prompt, str(judgment.level))].append(judgment)
        groups[(judgment.judge, judgment.model, judgment.prompt, ALL_LEVELS)].append(judgment)
    scores = []
    for (judge, model, prompt, level), members in groups.items():
        for subset in SUBSETS:
            chosen = [j for j in members if in_subset(j, subset)]
            if not chosen:
                continue  # no item, no number
            correct = sum(j.judgement == 1 and j.valid for j in chosen)
            invalid = sum(not j.valid for j in chosen)
            scores.append(Score(model, prompt, level, subset, round(100 * correct / len(chosen), 4), correct, len(chosen), invalid, judge))
    level_order = lambda level: (level == ALL_LEVELS, int(level) if level != ALL_LEVELS else 0)  # noqa: E731
    return sorted(scores, key=lambda s: (s.judge, s.model, s.prompt, level_order(s.level), SUBSETS.index(s.subset)))


def write_scores(scores: list[Score], path: str | Path) -> None:
    write_csv(path, (asdict(score) for score in scores), [f.name for f in fields(Score)])


def read_scores(path: str | Path) -> list[Score]:
    with Path(path).open(newline="") as handle:
        return [
            Score(
                row["model"],
                row["prompt"],
                row["level"],
                row["subset"],
                float(row["accuracy"]),
                int(row["n_correct"]),
                int(row["n"]),
                int(row["n_invalid"]),
                row["judge"],
            )
            for row in csv.DictReader(handle)
        ]


INVALID_FIELDS = ("judge", "model", "prompt", "level", "instance_id", "reason", "error")


def write_invalid(judgments: Iterable[Judgment], path: str | Path) -> int:
    """List every judgment without a valid verdict, so each counted-as-wrong item can be traced."""
    return write_csv(path, ({name: getattr(j, name) for name in INVALID_FIELDS} for j in judgments if not j.valid), INVALID_FIELDS)


def summarize_invalid(path: str | Path, examples: int = 3) -> str | None:
    """A short warning about the invalid items listed in `path`, or None when there are none."""
    path = Path(path)
    if not path.exists():
        return None
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    if not rows:
        return None
    distinct = sorted({row["error"] or row["reason"] for row in rows})
    lines = [f"{len(rows)} judged items have no valid verdict and count as wrong (listed in {path}):"]
    lines += [f"  {text}" for text in distinct[:examples]]
    if len(distinct) > examples:
        lines.append(f"  ... and {len(distinct) - examples} more distinct errors")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m virtuebench.metrics", description=__doc__.split("\n\n")[0])
    parser.add_argument("judgments", nargs="+")
    parser.add_argument("--out", required=True)
    parser.add_argument("--invalid-out", help="CSV listing every judgment without a valid verdict")
    args = parser.parse_args(argv)
    judgments = [j for path in args.judgments for j in load_records(path, Judgment)]
    scores = compute_scores(judgments)
    write_scores(scores, args.out)
    invalid = sum(not j.valid for j in judgments)
    if args.invalid_out:
        write_invalid(judgments, args.invalid_out)
    print(f"scores: {len(scores)} rows from {len(judgments)} judgments ({invalid} invalid) -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
