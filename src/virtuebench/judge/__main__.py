"""CLI for judging.

Items mode (shared/CONTRACT.md): each input line has id, question, answer, response; each output
line repeats id and adds refusal, judgement, valid (and the judge's reason):
    python -m virtuebench.judge ITEMS.jsonl --judge rules --out OUT.jsonl

Workflow mode: the input is a responses file; question and per-level ground truth come from the
instances table, and the output is judgment records (docs/records.md):
    python -m virtuebench.judge RESPONSES.jsonl --instances results/instances.parquet --judge rules --out J.jsonl

An LLM judge takes its settings as JSON (see config/schema.yaml, `judges`) and a cache path:
    python -m virtuebench.judge ITEMS.jsonl --judge gpt-4o --judge-config '{"kind": "llm", "model": "gpt-4o-2024-08-06"}'
        --cache results/judge_cache.sqlite --out OUT.jsonl

Agreement between two judges over the same responses:
    python -m virtuebench.judge agree --a J1.jsonl ... --b J2.jsonl ... --out report.json [--disagreements D.jsonl]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from pathlib import Path

from virtuebench.judge import get_judge
from virtuebench.records import Judgment, RecordError, load_records, write_jsonl_atomic


def agree(argv: list[str]) -> int:
    from virtuebench.judge.agreement import compare

    parser = argparse.ArgumentParser(prog="python -m virtuebench.judge agree")
    parser.add_argument("--a", nargs="+", required=True, help="judgment files of the first judge")
    parser.add_argument("--b", nargs="+", required=True, help="judgment files of the second judge")
    parser.add_argument("--out", required=True, help="summary (JSON)")
    parser.add_argument("--disagreements", help="the items they disagree on (JSONL)")
    args = parser.parse_args(argv)
    try:
        first = [j for path in args.a for j in load_records(path, Judgment)]
        second = [j for path in args.b for j in load_records(path, Judgment)]
    except RecordError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    summary, disagreements = compare(first, second)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(summary, indent=1) + "\n")
    if args.disagreements:
        write_jsonl_atomic(args.disagreements, disagreements)
    print(
        f"{summary['judge_a']} vs {summary['judge_b']}: {summary['n_shared']} shared items; "
        f"refusal agreement {summary['refusal']['agreement']} (kappa {summary['refusal']['kappa']}), "
        f"judgement agreement {summary['judgement']['agreement']} (kappa {summary['judgement']['kappa']}), "
        f"{len(disagreements)} disagreements",
        file=sys.stderr,
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["agree"]:
        return agree(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m virtuebench.judge", description=__doc__.split("\n\n")[0])
    parser.add_argument("input", help="items (id, question, answer, response) or, with --instances, responses")
    parser.add_argument("--judge", default="rules", help="rules, or the name of a judge given by --judge-config")
    parser.add_argument("--judge-config", default="{}", help="the judge's settings as a JSON object")
    parser.add_argument("--cache", help="SQLite verdict cache for an LLM judge")
    parser.add_argument("--out", required=True)
    parser.add_argument("--instances", help="instances table: switches to workflow mode")
    args = parser.parse_args(argv)
    from virtuebench.judge.llm import JudgeSetupError
    from virtuebench.judge.run import JudgeRequestsFailed, judge_items, judge_responses

    try:
        judge = get_judge(args.judge, json.loads(args.judge_config), args.cache)
        if args.instances:
            summary = judge_responses(args.input, args.instances, judge, args.out)
        else:
            summary = judge_items(args.input, judge, args.out)
    except (RecordError, JudgeSetupError, ValueError, JudgeRequestsFailed) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except sqlite3.Error as error:
        print(f"error: judge cache {args.cache}: {error}", file=sys.stderr)
        return 1
    print(summary, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
