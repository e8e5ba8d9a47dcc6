"""CLI for CVRR-ES.

python -m virtuebench.cvrr table INPUT ... --out DIR [--empty-predictions skip|wrong]   (alias: tables)
    Tables from judge outputs: DIR/table2.csv (setting, model, the 11 dimensions, average), DIR/table2.tex,
    DIR/table3.{csv,tex}, DIR/scores.csv (every number with its counts). Each INPUT is a folder in the
    release layout (<setting>/<Model>/<dimension>.json, the published outputs) or a JSONL file of Judgment
    records (imports and new runs); they are pooled. With --published-from PUBLISHED_DIR JSONL, it refuses unless
    JSONL is an import of PUBLISHED_DIR as it is now (the workflow's check of the published judgments).
python -m virtuebench.cvrr import PUBLISHED_DIR --out judgments.jsonl
    The published judge outputs as project Judgment records.
python -m virtuebench.cvrr download --commit SHA --out DIR
    The published judge outputs from the authors' public repository.
python -m virtuebench.cvrr figures DIR/table2.csv --out DIR
    Fig. 1 (averages) and Fig. 4 (DSCP gains).
python -m virtuebench.cvrr agree PUBLISHED_DIR --judge rules --out DIR
    How far an offline judge is from the published GPT-3.5 verdicts: agreement and Cohen's kappa per
    (setting, model) and overall (DIR/agreement.json, DIR/agreement.csv, DIR/disagreements.jsonl); for the
    rules judge, also over the items it is confident of and the others (rows `confident`, `unconfident`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from virtuebench.records import Judgment, RecordError, load_records, write_jsonl_atomic
from virtuebench.support.faults import fault_line
from virtuebench.support.stops import run_stoppable


def _read_judgments(path: str) -> list[Judgment]:
    """A release folder (<setting>/<Model>/<dimension>.json) or a JSONL file of Judgment records."""
    if Path(path).is_dir():
        from virtuebench.cvrr.published import read_published

        return read_published(path)
    return load_records(path, Judgment)


def imported_problem(published_dir: str | Path, imported: str | Path) -> str | None:
    """Why the Judgment records of `imported` are not an import of the release folder `published_dir` as it is now
    (`python -m virtuebench.cvrr import`), or None where they are: the published judgments a table pools are those of
    the release there now. Both are read whole (the release is a few MB)."""
    from virtuebench.cvrr.published import read_published
    from virtuebench.records import to_json_line

    try:
        held = sorted(map(to_json_line, load_records(imported, Judgment)))
    except (OSError, RecordError) as error:
        return f"{imported} cannot be read ({error})"
    now = sorted(map(to_json_line, read_published(published_dir)))
    if held != now:
        differ = len(set(held) ^ set(now))
        return f"{imported} is not an import of {published_dir} as it is now ({differ} record(s) differ)"
    return None


def _table(args: argparse.Namespace) -> int:
    from virtuebench.cvrr.scoring import write_tables

    if args.published_from:  # checked before anything is written (docs/reliability.md)
        problem = imported_problem(*args.published_from)
        if problem:
            print(
                f"error: refusing to write {args.out}/table2.csv: {problem}; rerun the workflow "
                "(`snakemake --forcerun import_cvrr_published`)",
                file=sys.stderr,
            )
            return 1
    judgments = [j for path in args.inputs for j in _read_judgments(path)]
    rows = write_tables(judgments, args.out, args.empty_predictions, args.options)
    print(
        f"cvrr: {len(rows)} (setting, model) rows from {len(judgments)} judgments -> "
        f"{args.out}/table2.csv, table2.tex, table2.html, table3.*, scores.csv",
        file=sys.stderr,
    )
    return 0


def _import(args: argparse.Namespace) -> int:
    from virtuebench.cvrr.published import read_published

    judgments = read_published(args.published_dir)
    write_jsonl_atomic(args.out, judgments)
    print(f"cvrr: {len(judgments)} published judgments -> {args.out}", file=sys.stderr)
    return 0


def _download(args: argparse.Namespace) -> int:
    from virtuebench.cvrr.download import download_published

    path = download_published(args.out, commit=args.commit, url=args.url)
    print(f"cvrr: published judge outputs in {path}", file=sys.stderr)
    return 0


def _figures(args: argparse.Namespace) -> int:
    from virtuebench.cvrr.figures import fig1, fig4

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    fig1(args.table2_csv, out / "fig1.png", out / "fig1.csv")
    gains = fig4(args.table2_csv, out / "fig4_dscp_gains.png", out / "fig4_dscp_gains.csv")
    print(f"cvrr: Fig. 1 and Fig. 4 ({len(gains)} models with both settings) -> {out}", file=sys.stderr)
    return 0


def _agree(args: argparse.Namespace) -> int:
    from virtuebench.cvrr.agreement import measure
    from virtuebench.cvrr.published import read_published

    summary = measure(read_published(args.published_dir), args.judge, args.out)
    overall = summary["judgement"]
    print(
        f"cvrr: {args.judge} vs published: agreement {overall['agreement']}, kappa {overall['kappa']} "
        f"over {overall['n']} items -> {args.out}/agreement.csv",
        file=sys.stderr,
    )
    for label in ("confident", "unconfident"):  # a judge that says how sure it is (rules, hybrid)
        if label in summary:
            part = summary[label]
            print(
                f"  {label}: {part['n']} items ({part['share']}), agreement {part['judgement']['agreement']}, kappa {part['judgement']['kappa']}",
                file=sys.stderr,
            )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m virtuebench.cvrr", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)

    table = commands.add_parser("table", aliases=["tables"], help="Tables 2 and 3 from judge outputs (release folders or JSONL)")
    table.add_argument("inputs", nargs="+", metavar="INPUT", help="a release folder (<setting>/<Model>/<dimension>.json) or Judgment JSONL")
    table.add_argument("--out", required=True)
    table.add_argument(
        "--empty-predictions",
        choices=("skip", "wrong"),
        default="skip",
        help="skip: the authors' scoring (default); wrong: count them incorrect",
    )
    table.add_argument(
        "--published-from",
        nargs=2,
        metavar=("PUBLISHED_DIR", "JSONL"),
        help="refuse unless JSONL (one of the inputs) is an import of the release folder PUBLISHED_DIR as it is now",
    )
    table.add_argument("--options", default="", help="the run's options in effect, for both tables' captions (the workflow's)")
    table.set_defaults(func=_table)

    importer = commands.add_parser("import", help="published judge outputs -> Judgment records (JSONL)")
    importer.add_argument("published_dir")
    importer.add_argument("--out", required=True)
    importer.set_defaults(func=_import)

    download = commands.add_parser("download", help="fetch the published judge outputs")
    download.add_argument("--out", required=True)
    download.add_argument("--commit", default=None, help="repository commit (default: the pinned one)")
    download.add_argument("--url", default=None, help="archive URL (default: the authors' repository on GitHub)")
    download.set_defaults(func=_download)

    figures = commands.add_parser("figures", help="Fig. 1 (averages) and Fig. 4 (DSCP gains) from a table2.csv")
    figures.add_argument("table2_csv")
    figures.add_argument("--out", required=True, help="folder for fig1.png, fig4_dscp_gains.png and their CSVs")
    figures.set_defaults(func=_figures)

    agree = commands.add_parser("agree", help="an offline judge against the published verdicts")
    agree.add_argument("published_dir")
    agree.add_argument("--judge", default="rules")
    agree.add_argument("--out", required=True)
    agree.set_defaults(func=_agree)

    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (RecordError, OSError) as error:  # a full disk or a permission in the documented one line
        print(f"error: {fault_line(error) or error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    # Ctrl-C or SIGTERM: one line, no traceback (its outputs are not written whole; Snakemake removes them)
    sys.exit(run_stoppable(lambda stop: main()))
