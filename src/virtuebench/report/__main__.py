"""CLI: python -m virtuebench.report {tables,paper-vs-run,fig4,fig6,levels,composition,sources,link-folder} ... (see --help of each)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from virtuebench.comparisons import read_comparisons
from virtuebench.instances import read_instances
from virtuebench.metrics import (
    INVALID_OPTIONS,
    add_scoring_arguments,
    add_trust_arguments,
    read_scores,
    scoring_from_arguments,
    trust_from_arguments,
)
from virtuebench.provenance import NotIntact, require_intact
from virtuebench.report.figures import POOLED_LEVELS, composition, fig4, fig6, fig_levels, sources
from virtuebench.report.folders import link_folder
from virtuebench.report.paper import PAPER_VS_RUN_COLUMNS, NoPaperRow, paper_rows_of, paper_vs_run, paper_vs_run_html, paper_vs_run_tex
from virtuebench.report.tables import HTML, EmptyTable, require_rows, table1, table2, table2_trust
from virtuebench.support.stops import run_stoppable
from virtuebench.support.tabular import write_csv


def _intact(*paths: str | None, writing: str) -> bool:
    """Whether the scores and comparisons a writer reads are intact and made from the judgments there now
    (virtuebench.provenance); where not, one line says which file and what to run, and nothing is written."""
    try:
        require_intact(paths, writing)
    except NotIntact as error:
        print(f"error: {error}", file=sys.stderr)
        return False
    return True


def _tables(args: argparse.Namespace) -> int:
    if not _intact(args.scores, writing=args.table1):
        return 1
    scores = read_scores(args.scores)
    try:
        require_rows(scores, args.models, args.prompt, args.judge, args.scores)
    except EmptyTable as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    common = (scores, args.models, args.levels, args.prompt, args.judge)
    shown = (args.intervals, args.model_choices, args.judge_options)
    scoring = scoring_from_arguments(args)  # for the captions: checked by the scoring job, which wrote these scores
    Path(args.table1).write_text(table1(*common, *shown, scoring=scoring))
    Path(args.table2).write_text(table2(*common, *shown, scoring=scoring))
    if args.table2_trust:
        Path(args.table2_trust).write_text(table2_trust(*common, trust_from_arguments(args), *shown, scoring=scoring))
    # The same tables as HTML pages, for Snakemake's report (which shows no .tex)
    if args.table1_html:
        Path(args.table1_html).write_text(table1(*common, *shown, markup=HTML, scoring=scoring))
    if args.table2_html:
        Path(args.table2_html).write_text(table2(*common, *shown, markup=HTML, scoring=scoring))
    if args.table2_trust_html:
        Path(args.table2_trust_html).write_text(table2_trust(*common, trust_from_arguments(args), *shown, markup=HTML, scoring=scoring))
    return 0


def _paper_name(text: str) -> tuple[str, str]:
    """MODEL=ROW (report.paper_names' pairs)."""
    model, equals, row = text.partition("=")
    if not (model and equals and row):
        raise argparse.ArgumentTypeError(f"{text!r} is not MODEL=ROW (a run model, then the paper's row it is)")
    return model, row


def _paper_vs_run(args: argparse.Namespace) -> int:
    if not _intact(args.scores, writing=args.csv):
        return 1
    scores = read_scores(args.scores)
    try:
        shown = paper_rows_of(args.models, dict(args.paper_name))
        require_rows(scores, list(shown) or args.models, args.prompt, args.judge, args.scores)
        rows = paper_vs_run(scores, args.models, args.levels, args.judge, dict(args.paper_name), args.prompt)
    except (NoPaperRow, EmptyTable) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    write_csv(args.csv, rows, PAPER_VS_RUN_COLUMNS)
    Path(args.tex).write_text(paper_vs_run_tex(rows, args.prompt, args.judge))
    if args.html:
        Path(args.html).write_text(paper_vs_run_html(rows, args.prompt, args.judge))
    return 0


def _fig4(args: argparse.Namespace) -> int:
    fig4(read_instances(args.instances), args.levels, args.out, args.csv)
    return 0


def _fig6(args: argparse.Namespace) -> int:
    if not _intact(args.scores, args.comparisons, writing=args.out):
        return 1
    comparisons = read_comparisons(args.comparisons) if args.comparisons else []
    fig6(read_scores(args.scores), args.models, args.prompts, args.judge, args.out, args.csv, comparisons, args.pooled_levels, args.invalid)
    return 0


def _counted(args: argparse.Namespace) -> int:
    args.draw(read_instances(args.instances), args.out, args.csv)
    return 0


def _levels(args: argparse.Namespace) -> int:
    if not _intact(args.scores, writing=args.out):
        return 1
    fig_levels(read_scores(args.scores), args.models, args.levels, args.prompt, args.judge, args.out, args.csv)
    return 0


def _link_folder(args: argparse.Namespace) -> int:
    counts = link_folder(args.source, args.out)
    print(f"link-folder: {args.source} -> {args.out}: {counts['linked']} files linked, {counts['copied']} copied", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m virtuebench.report", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    tables = commands.add_parser("tables", help="Tables 1 and 2 (LaTeX, and HTML on request) from scores.csv")
    tables.add_argument("--scores", required=True)
    tables.add_argument("--models", nargs="+", required=True)
    tables.add_argument("--levels", nargs="+", type=int, required=True)
    tables.add_argument("--prompt", required=True)
    tables.add_argument("--judge", required=True)
    tables.add_argument("--table1", required=True)
    tables.add_argument("--table2", required=True)
    tables.add_argument("--table2-trust", help="Table 2's variant with the trust score")
    for name in ("table1", "table2", "table2-trust"):
        tables.add_argument(f"--{name}-html", help=f"--{name} as an HTML page (what Snakemake's report shows)")
    tables.add_argument("--intervals", action="store_true", help="print each number's 95%% interval")
    tables.add_argument("--model-choices", default="", help="the models' named registry choices in effect, for the captions")
    tables.add_argument("--judge-options", default="", help="the judge's open decisions in effect (reasoning, ...), for the captions")
    add_trust_arguments(tables)  # the trust score's settings, for the caption
    add_scoring_arguments(tables)  # report.invalid and report.categories, for the captions
    tables.set_defaults(func=_tables)

    versus = commands.add_parser("paper-vs-run", help="the paper's Tables 1 and 2 beside the run's numbers and intervals")
    versus.add_argument("--scores", required=True)
    versus.add_argument("--models", nargs="+", required=True)
    versus.add_argument("--levels", nargs="+", type=int, required=True)
    versus.add_argument("--prompt", default="honest", help="the run's prompt compared (the paper's tables: honest)")
    versus.add_argument("--judge", required=True)
    versus.add_argument(
        "--paper-name", action="append", default=[], type=_paper_name, metavar="MODEL=ROW", help="a run model shown as the paper's row ROW"
    )
    versus.add_argument("--csv", required=True)
    versus.add_argument("--tex", required=True)
    versus.add_argument("--html", help="the table as an HTML page (what Snakemake's report shows)")
    versus.set_defaults(func=_paper_vs_run)

    four = commands.add_parser("fig4", help="Fig. 4 from the instances table")
    four.add_argument("--instances", required=True)
    four.add_argument("--levels", nargs="+", type=int, required=True)
    four.add_argument("--out", required=True)
    four.add_argument("--csv", required=True)
    four.set_defaults(func=_fig4)

    six = commands.add_parser("fig6", help="Fig. 6 from scores.csv")
    six.add_argument("--scores", required=True)
    six.add_argument("--models", nargs="+", required=True)
    six.add_argument("--prompts", nargs="+", required=True)
    six.add_argument("--judge", required=True)
    six.add_argument("--comparisons", help="results/comparisons.csv: marks the prompt effects that hold")
    six.add_argument(
        "--pooled-levels",
        choices=POOLED_LEVELS,
        required=True,
        help="report.fig6_levels: every level a model ran, or those every model ran",
    )
    six.add_argument("--invalid", choices=INVALID_OPTIONS, required=True, help="report.invalid, for the title")
    six.add_argument("--out", required=True)
    six.add_argument("--csv", required=True)
    six.set_defaults(func=_fig6)

    for name, draw, text in (
        ("composition", composition, "Fig. 3: instances per category and task type"),
        ("sources", sources, "supplement Fig. 1: instances per source"),
    ):
        counted = commands.add_parser(name, help=text)
        counted.add_argument("--instances", required=True)
        counted.add_argument("--out", required=True)
        counted.add_argument("--csv", required=True)
        counted.set_defaults(func=_counted, draw=draw)

    levels = commands.add_parser("levels", help="accuracy against frames per model, from scores.csv")
    levels.add_argument("--scores", required=True)
    levels.add_argument("--models", nargs="+", required=True)
    levels.add_argument("--levels", nargs="+", type=int, required=True)
    levels.add_argument("--prompt", required=True)
    levels.add_argument("--judge", required=True)
    levels.add_argument("--out", required=True)
    levels.add_argument("--csv", required=True)
    levels.set_defaults(func=_levels)

    folder = commands.add_parser("link-folder", help="a folder of hard links to another (the browser, for snakemake --report)")
    folder.add_argument("--source", required=True)
    folder.add_argument("--out", required=True)
    folder.set_defaults(func=_link_folder)

    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    # Ctrl-C or SIGTERM: one line, no traceback (its outputs are not written whole; Snakemake removes them)
    sys.exit(run_stoppable(lambda stop: main()))
