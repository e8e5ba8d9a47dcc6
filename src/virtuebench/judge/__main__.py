"""CLI for judging.

Items mode (shared/CONTRACT.md): each input line has id, question, answer, response; each output
line repeats id and adds refusal, judgement, valid (and the judge's reason):
    python -m virtuebench.judge ITEMS.jsonl --judge rules --out OUT.jsonl

Workflow mode: the input is a responses file; question and per-level ground truth come from the
instances table, and the output is judgment records (docs/records.md):
    python -m virtuebench.judge RESPONSES.jsonl --instances results/instances.parquet --judge rules --out J.jsonl
"""

from __future__ import annotations

import argparse
import sys

from virtuebench.judge import JUDGES, get_judge
from virtuebench.judge.run import judge_items, judge_responses
from virtuebench.records import RecordError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m virtuebench.judge", description=__doc__.split("\n\n")[0])
    parser.add_argument("input", help="items (id, question, answer, response) or, with --instances, responses")
    parser.add_argument("--judge", default="rules", choices=sorted(JUDGES))
    parser.add_argument("--out", required=True)
    parser.add_argument("--instances", help="instances table: switches to workflow mode")
    args = parser.parse_args(argv)
    judge = get_judge(args.judge)
    try:
        if args.instances:
            summary = judge_responses(args.input, args.instances, judge, args.out)
        else:
            summary = judge_items(args.input, judge, args.out)
    except RecordError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(summary, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
