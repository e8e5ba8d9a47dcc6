"""CLI: python -m virtuebench.report {tables,fig4,fig6} ... (see --help of each)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from virtuebench.instances import read_instances
from virtuebench.metrics import read_scores
from virtuebench.report.figures import fig4, fig6
from virtuebench.report.tables import table1, table2


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m virtuebench.report", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    tables = commands.add_parser("tables", help="Tables 1 and 2 (LaTeX) from scores.csv")
    tables.add_argument("--scores", required=True)
    tables.add_argument("--models", nargs="+", required=True)
    tables.add_argument("--levels", nargs="+", type=int, required=True)
    tables.add_argument("--prompt", required=True)
    tables.add_argument("--judge", required=True)
    tables.add_argument("--table1", required=True)
    tables.add_argument("--table2", required=True)

    four = commands.add_parser("fig4", help="Fig. 4 from the instances table")
    four.add_argument("--instances", required=True)
    four.add_argument("--levels", nargs="+", type=int, required=True)
    four.add_argument("--out", required=True)
    four.add_argument("--csv", required=True)

    six = commands.add_parser("fig6", help="Fig. 6 from scores.csv")
    six.add_argument("--scores", required=True)
    six.add_argument("--models", nargs="+", required=True)
    six.add_argument("--prompts", nargs="+", required=True)
    six.add_argument("--judge", required=True)
    six.add_argument("--out", required=True)
    six.add_argument("--csv", required=True)

    args = parser.parse_args(argv)
    if args.command == "tables":
        scores = read_scores(args.scores)
        Path(args.table1).write_text(table1(scores, args.models, args.levels, args.prompt, args.judge))
        Path(args.table2).write_text(table2(scores, args.models, args.levels, args.prompt, args.judge))
    elif args.command == "fig4":
        fig4(read_instances(args.instances), args.levels, args.out, args.csv)
    else:
        fig6(read_scores(args.scores), args.models, args.prompts, args.judge, args.out, args.csv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
