"""CLI for judging: two subcommands, `judge` (the default: it may be left out) and `agree`.

    python -m virtuebench.judge [judge] INPUT --out OUT [--judge NAME] ...
    python -m virtuebench.judge agree (--a J1.jsonl ... --b J2.jsonl ... | --set SPLIT) ...

The word `judge` is optional: argv whose first word is neither a subcommand (`judge`, `agree`) nor -h/--help
is read as the `judge` subcommand, so the contract's call shape (shared/CONTRACT.md) keeps working. An input
file literally named `agree` or `judge` therefore needs the explicit form: `python -m virtuebench.judge judge agree ...`.

Items mode (shared/CONTRACT.md): each input line has id, question, answer, response; each output
line repeats id and adds refusal, judgement, valid (and the judge's reason):
    python -m virtuebench.judge ITEMS.jsonl --judge rules --out OUT.jsonl

Workflow mode: the input is a responses file; question and per-level ground truth come from the
instances table, and the output is judgment records (docs/records.md):
    python -m virtuebench.judge RESPONSES.jsonl --instances results/instances.parquet --judge rules --out J.jsonl

An LLM judge takes its settings as JSON (see config/schema.yaml, `judges`) and a cache path:
    python -m virtuebench.judge ITEMS.jsonl --judge gpt-4o --judge-config '{"kind": "llm", "model": "gpt-4o-2024-08-06"}'
        --cache results/judge_cache.sqlite --out OUT.jsonl

Agreement between two judges over the same responses (refusal and judgement agreement, kappa, and the
refusal precision and recall of the second taking the first as the reference):
    python -m virtuebench.judge agree --a J1.jsonl ... --b J2.jsonl ... --out report.json [--disagreements D.jsonl]
The same for a judge against the labelled judge set (docs/judge_set.md), on its tune or held-out part:
    python -m virtuebench.judge agree --set heldout [--judge rules] [--disagreements D.jsonl]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from pathlib import Path

from virtuebench.judge import get_judge
from virtuebench.judge.judge_set import SPLITS
from virtuebench.records import Judgment, RecordError, load_records, write_jsonl_atomic
from virtuebench.support.settings import merge_settings

COMMANDS = ("judge", "agree")
DEFAULT_COMMAND = "judge"


def _judge(args: argparse.Namespace) -> int:
    from virtuebench.judge.llm import JudgeSetupError
    from virtuebench.judge.run import JudgeRequestsFailed, judge_items, judge_responses
    from virtuebench.support.openai_client import EndpointUnreachable

    try:
        judge = get_judge(args.judge, merge_settings(json.loads(args.judge_config), json.loads(args.judge_run_config)), args.cache)
        if args.instances:
            summary = judge_responses(args.input, args.instances, judge, args.out)
        else:
            summary = judge_items(args.input, judge, args.out)
    except (RecordError, JudgeSetupError, ValueError, JudgeRequestsFailed, EndpointUnreachable) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except sqlite3.Error as error:
        print(f"error: judge cache {args.cache}: {error}", file=sys.stderr)
        return 1
    print(summary, file=sys.stderr)
    return 0


def _agree(args: argparse.Namespace) -> int:
    from virtuebench.judge.agreement import compare

    if args.set:
        from virtuebench.judge.judge_set import as_judgments

        first, second = as_judgments(args.set, args.judge)
    elif args.a and args.b:
        try:
            first = [j for path in args.a for j in load_records(path, Judgment)]
            second = [j for path in args.b for j in load_records(path, Judgment)]
        except RecordError as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
    else:
        args.parser.error("give --a and --b, or --set")
    summary, disagreements = compare(first, second)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(summary, indent=1) + "\n")
    if args.disagreements:
        write_jsonl_atomic(args.disagreements, disagreements)
    refusal, judgement = summary["refusal"], summary["judgement"]
    print(
        f"{summary['judge_a']} vs {summary['judge_b']}: {summary['n_shared']} shared items\n"
        f"  refusal:   agreement {refusal['agreement']} (kappa {refusal['kappa']}), "
        f"precision {refusal['precision']}, recall {refusal['recall']} (of {summary['judge_b']}'s refusals, taking {summary['judge_a']} as the reference)\n"
        f"  judgement: agreement {judgement['agreement']} (kappa {judgement['kappa']}), "
        f"correct by {summary['judge_a']} {judgement['rate_a']}, by {summary['judge_b']} {judgement['rate_b']}\n"
        f"  {len(disagreements)} disagreements",
        file=sys.stderr,
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in (*COMMANDS, "-h", "--help"):
        argv.insert(0, DEFAULT_COMMAND)  # the bare form: `python -m virtuebench.judge INPUT --out OUT ...`
    parser = argparse.ArgumentParser(
        prog="python -m virtuebench.judge", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("judge", help="judge items or responses (the default: the word may be left out)")
    run.add_argument("input", help="items (id, question, answer, response) or, with --instances, responses")
    run.add_argument("--judge", default="rules", help="rules, or the name of a judge given by --judge-config")
    run.add_argument("--judge-config", default="{}", help="the judge's settings that change its verdicts, as a JSON object")
    run.add_argument(
        "--judge-run-config", default="{}", help="its settings that change only how the job runs (key variable, concurrency; JSON)"
    )
    run.add_argument("--cache", help="SQLite verdict cache for an LLM judge")
    run.add_argument("--out", required=True)
    run.add_argument("--instances", help="instances table: switches to workflow mode")
    run.set_defaults(func=_judge)

    agreement = commands.add_parser(
        "agree",
        help="agreement of two judges, or of a judge with the labelled judge set",
        description="Agreement of two judges (--a is the reference), or of a judge with the labelled judge set (--set).",
    )
    agreement.add_argument("--a", nargs="+", help="judgment files of the first (reference) judge")
    agreement.add_argument("--b", nargs="+", help="judgment files of the second judge")
    agreement.add_argument("--set", choices=SPLITS, help="judge the labelled set (docs/judge_set.md) instead")
    agreement.add_argument("--judge", default="rules", help="with --set: the judge to measure")
    agreement.add_argument("--out", help="summary (JSON)")
    agreement.add_argument("--disagreements", help="the items they disagree on (JSONL)")
    agreement.set_defaults(func=_agree, parser=agreement)

    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
