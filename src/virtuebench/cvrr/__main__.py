"""CLI for CVRR-ES.

python -m virtuebench.cvrr table PUBLISHED_DIR --out DIR
    Tables straight from judge outputs in the release layout (<setting>/<Model>/<dimension>.json):
    DIR/table2.csv (setting, model, the 11 dimensions, average), DIR/table2.tex, DIR/table3.{csv,tex},
    DIR/scores.csv (every number with its counts).
python -m virtuebench.cvrr import PUBLISHED_DIR --out judgments.jsonl
    The same judge outputs as project Judgment records.
python -m virtuebench.cvrr tables JUDGMENTS.jsonl ... --out DIR
    Tables from Judgment records (imports and new runs together).
python -m virtuebench.cvrr download --commit SHA --out DIR
    The published judge outputs from the authors' public repository.
python -m virtuebench.cvrr agree PUBLISHED_DIR --judge rules --out DIR
    How far an offline judge is from the published GPT-3.5 verdicts: agreement and Cohen's kappa per
    (setting, model) and overall (DIR/agreement.json, DIR/agreement.csv, DIR/disagreements.jsonl).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from virtuebench.records import Judgment, RecordError, load_records, write_jsonl_atomic


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m virtuebench.cvrr", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    table = commands.add_parser("table", help="tables from published judge outputs")
    table.add_argument("published_dir")
    table.add_argument("--out", required=True)
    importer = commands.add_parser("import", help="published judge outputs -> Judgment records (JSONL)")
    importer.add_argument("published_dir")
    importer.add_argument("--out", required=True)
    tables = commands.add_parser("tables", help="tables from Judgment records")
    tables.add_argument("judgments", nargs="+")
    tables.add_argument("--out", required=True)
    tables.add_argument(
        "--empty-predictions",
        choices=("skip", "wrong"),
        default="skip",
        help="skip: the authors' scoring (default); wrong: count them incorrect",
    )
    download = commands.add_parser("download", help="fetch the published judge outputs")
    download.add_argument("--out", required=True)
    download.add_argument("--commit", default=None, help="repository commit (default: the pinned one)")
    download.add_argument("--url", default=None, help="archive URL (default: the authors' repository on GitHub)")
    figures = commands.add_parser("figures", help="Fig. 1 (averages) and Fig. 4 (DSCP gains) from a table2.csv")
    figures.add_argument("table2_csv")
    figures.add_argument("--out", required=True, help="folder for fig1.png, fig4_dscp_gains.png and their CSVs")
    agree = commands.add_parser("agree", help="an offline judge against the published verdicts")
    agree.add_argument("published_dir")
    agree.add_argument("--judge", default="rules")
    agree.add_argument("--out", required=True)
    args = parser.parse_args(argv)

    from virtuebench.cvrr.published import read_published
    from virtuebench.cvrr.scoring import write_tables

    try:
        if args.command == "table":
            rows = write_tables(read_published(args.published_dir), args.out)
            print(f"cvrr: {len(rows)} (setting, model) rows -> {args.out}/table2.csv, table2.tex, table3.*, scores.csv", file=sys.stderr)
        elif args.command == "import":
            judgments = read_published(args.published_dir)
            write_jsonl_atomic(args.out, judgments)
            print(f"cvrr: {len(judgments)} published judgments -> {args.out}", file=sys.stderr)
        elif args.command == "tables":
            judgments = [j for path in args.judgments for j in load_records(path, Judgment)]
            rows = write_tables(judgments, args.out, args.empty_predictions)
            print(f"cvrr: {len(rows)} (setting, model) rows from {len(judgments)} judgments -> {args.out}", file=sys.stderr)
        elif args.command == "figures":
            from virtuebench.cvrr.figures import fig1, fig4

            out = Path(args.out)
            out.mkdir(parents=True, exist_ok=True)
            fig1(args.table2_csv, out / "fig1.png", out / "fig1.csv")
            gains = fig4(args.table2_csv, out / "fig4_dscp_gains.png", out / "fig4_dscp_gains.csv")
            print(f"cvrr: Fig. 1 and Fig. 4 ({len(gains)} models with both settings) -> {out}", file=sys.stderr)
        elif args.command == "agree":
            from virtuebench.cvrr.agreement import measure

            overall = measure(read_published(args.published_dir), args.judge, args.out)
            print(
                f"cvrr: {args.judge} vs published: agreement {overall['agreement']}, kappa {overall['kappa']} "
                f"over {overall['n']} items -> {args.out}/agreement.csv",
                file=sys.stderr,
            )
        else:
            from virtuebench.cvrr.download import download_published

            path = download_published(args.out, commit=args.commit, url=args.url)
            print(f"cvrr: published judge outputs in {path}", file=sys.stderr)
    except (RecordError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
