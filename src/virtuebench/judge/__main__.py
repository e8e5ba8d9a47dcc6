"""CLI for judging: three subcommands, `judge` (the default: it may be left out), `agree` and `precision`.

    python -m virtuebench.judge [judge] INPUT --out OUT [--judge NAME] ...
    python -m virtuebench.judge agree (--a J1.jsonl ... --b J2.jsonl ... | --set SPLIT) ...
    python -m virtuebench.judge precision [--set tuning]

The word `judge` is optional: argv whose first word is neither a subcommand (`judge`, `agree`, `precision`) nor
-h/--help is read as the `judge` subcommand, so the contract's call shape (docs/contract.md) keeps working. An input
file literally named `agree`, `judge` or `precision` therefore needs the explicit form:
`python -m virtuebench.judge judge agree ...`.

Items mode (docs/contract.md): each input line has id, question, answer, response; each output
line repeats id and adds refusal, judgement, valid (and the judge's reason):
    python -m virtuebench.judge ITEMS.jsonl --judge rules --out OUT.jsonl

Workflow mode: the input is a responses file; question and per-level ground truth come from the
instances table, and the output is judgment records (docs/records.md):
    python -m virtuebench.judge RESPONSES.jsonl --instances results/instances.parquet --judge rules --out J.jsonl

A judge defined in config takes its settings as JSON (its kind's: virtuebench.judge.kinds) and a cache path:
    python -m virtuebench.judge ITEMS.jsonl --judge gpt-4o --judge-config '{"kind": "llm", "model": "gpt-4o-2024-08-06"}'
        --cache results/judge_cache.sqlite --out OUT.jsonl

Agreement between two judges over the same responses (refusal and judgement agreement, kappa, and the
refusal precision and recall of the second taking the first as the reference):
    python -m virtuebench.judge agree --a J1.jsonl ... --b J2.jsonl ... --out report.json [--disagreements D.jsonl]
The same for a judge against the labelled judge set (docs/judge_set.md), on its tune or held-out part:
    python -m virtuebench.judge agree --set heldout [--judge rules] [--disagreements D.jsonl]
Several parts given after --set are pooled (`--set real-heldout2 style-heldout2`).
With the rules judge (or a hybrid) the summary also splits the items by the rules' `confident`.

The rules judge's precision per rule on a part of the judge set (default: the tuning parts), with the labels it
is confident of, and what calibrating on that part would choose (virtuebench.judge.rules, docs/judge_set.md):
    python -m virtuebench.judge precision [--set tuning] [--out precision.csv]
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

COMMANDS = ("judge", "agree", "precision")
DEFAULT_COMMAND = "judge"


def _judge(args: argparse.Namespace) -> int:
    from virtuebench.support.stops import run_stoppable

    return run_stoppable(lambda stop: _judge_stoppable(args, stop))


def _kept(out: Path) -> str:
    """What a stopped or failed judge job kept: the verdicts in its progress file (workflow mode), else nothing."""
    partial = out.with_name(out.name + ".partial")
    if not partial.exists():
        return f"nothing was written to {out}; rerun the same command"
    judged = set()
    for line in partial.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and not record.get("retryable") and "instance_id" in record:
            judged.add(record["instance_id"])
    return f"{len(judged)} judged items are kept in {partial}; rerun the same command to go on"


def _judge_stoppable(args: argparse.Namespace, stop) -> int:
    from virtuebench.judge.llm import JudgeSetupError
    from virtuebench.judge.run import JudgeRequestsFailed, judge_items, judge_responses
    from virtuebench.support.faults import describe, environment_fault
    from virtuebench.support.openai_client import EndpointUnreachable

    stop.note = lambda: _kept(Path(args.out))
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
    except Exception as error:  # a full disk, a permission: one line, the progress file kept for the rerun
        fault = environment_fault(error)
        if fault is None:
            raise
        where = fault.filename if fault.filename is not None else args.out
        line = describe(error, where, "using" if fault.filename is not None else "writing")
        print(f"error: {line} ({_kept(Path(args.out))})", file=sys.stderr)
        return 1
    print(summary, file=sys.stderr)
    return 0


def _agree(args: argparse.Namespace) -> int:
    from virtuebench.judge.agreement import compare

    if args.set:
        from virtuebench.judge.judge_set import as_judgments

        first, second = [], []
        for split in args.set:  # several parts are pooled: their ids are unique across the set
            labels, verdicts = as_judgments(split, args.judge)
            first += labels
            second += verdicts
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
    if "decided_by" in summary:
        print(f"  decided by: {', '.join(f'{by} {n}' for by, n in summary['decided_by'].items())}", file=sys.stderr)
    for label in ("confident", "unconfident"):
        if label in summary:
            part = summary[label]
            print(
                f"  {label} ({part['n']} items, {part['share']} of them): refusal agreement {part['refusal']['agreement']}, "
                f"judgement agreement {part['judgement']['agreement']}",
                file=sys.stderr,
            )
    return 0


def _precision(args: argparse.Namespace) -> int:
    import csv

    from virtuebench.judge.judge_set import FixtureMissing, calibrate, load, precision_by_rule
    from virtuebench.judge.rules import CONFIDENT_MATCH, CONFIDENT_REFUSAL, MIN_CASES, MIN_PRECISION

    try:
        cases = load(args.set)
    except FixtureMissing as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    rows = precision_by_rule(cases)
    frozen = {"refusal": CONFIDENT_REFUSAL, "match": CONFIDENT_MATCH}
    for row in rows:
        row["confident"] = row["label"] in frozen[row["stage"]]
    print(f"{len(cases)} cases of {args.set}; confident where precision >= {MIN_PRECISION} over >= {MIN_CASES} cases", file=sys.stderr)
    print(f"{'stage':8} {'label':40} {'n':>5} {'agree':>6} {'precision':>9}  confident", file=sys.stderr)
    for row in rows:
        print(
            f"{row['stage']:8} {row['label']:40} {row['n']:5d} {row['agree']:6d} {row['precision']:9.4f}  {'yes' if row['confident'] else ''}",
            file=sys.stderr,
        )
    refusal, match = calibrate(cases)
    if (refusal, match) != (CONFIDENT_REFUSAL, CONFIDENT_MATCH):
        added = sorted((refusal - CONFIDENT_REFUSAL) | (match - CONFIDENT_MATCH))
        dropped = sorted((CONFIDENT_REFUSAL - refusal) | (CONFIDENT_MATCH - match))
        print(f"calibrating on {args.set} would add {added or 'nothing'} and drop {dropped or 'nothing'}", file=sys.stderr)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        with open(args.out, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]) if rows else ["stage"])
            writer.writeheader()
            writer.writerows(rows)
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
    agreement.add_argument("--set", nargs="+", choices=SPLITS, help="judge parts of the labelled set (docs/judge_set.md), pooled, instead")
    agreement.add_argument("--judge", default="rules", help="with --set: the judge to measure")
    agreement.add_argument("--out", help="summary (JSON)")
    agreement.add_argument("--disagreements", help="the items they disagree on (JSONL)")
    agreement.set_defaults(func=_agree, parser=agreement)

    precision = commands.add_parser(
        "precision",
        help="the rules judge's precision per rule on the labelled judge set",
        description="The rules judge's precision per rule label on a part of the labelled judge set (docs/judge_set.md).",
    )
    precision.add_argument("--set", choices=SPLITS, default="tuning", help="the part (default: the tuning parts)")
    precision.add_argument("--out", help="the table (CSV)")
    precision.set_defaults(func=_precision)

    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
