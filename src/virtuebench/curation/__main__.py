"""CLI of the curation stages, one subcommand per rule (rules/curation.smk, rules/supplement.smk):

length | answerability | difficulty   one filter: IN.parquet -> OUT.parquet, removed CSV, summary JSON
merge        the kept questions of every source -> one table, and the funnel's counts
export       kept questions + draft answers -> annotation batch CSVs
import       verified batches -> results/instances.parquet, an import report and the evidence check
stats        counts per source, category and task type
supplement-sets | supplement-table   the supplementary's Table 1 (MCQ vs open-ended at 64 frames)
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path

from virtuebench.curation import annotation, filters, stats
from virtuebench.instances import InstancesError, read_instances, write_instances
from virtuebench.support.settings import merge_settings
from virtuebench.support.stops import run_stoppable
from virtuebench.support.tabular import write_csv


def _write_filter_outputs(result: filters.FilterResult, args: argparse.Namespace, source: str) -> None:
    write_instances(result.kept, args.out)
    write_csv(args.removed, result.removed, ["instance_id", "source", "decision", "reason"])
    summary = {"source": source, **result.summary()}
    Path(args.summary).write_text(json.dumps(summary, indent=1) + "\n")
    if getattr(args, "decisions", None):
        with open(args.decisions, "w") as handle:
            for record in result.decisions:
                handle.write(json.dumps(record) + "\n")
    print(
        f"{result.stage} ({source}): {summary['n_in']} in, {summary['n_removed']} removed "
        f"({summary['n_invalid']} without a valid decision), {summary['n_out']} kept -> {args.out}",
        file=sys.stderr,
    )


def _llm_filter(args: argparse.Namespace, stage: str) -> filters.LlmFilter:
    from virtuebench.judge.cache import VerdictCache
    from virtuebench.models import load_backend
    from virtuebench.models.spec import ModelSpec
    from virtuebench.records import stable_hash

    tracked = json.loads(args.model_config)
    backend = load_backend(ModelSpec.from_job(args.model, tracked, json.loads(args.model_run_config)))
    # The decisions' cache key: the settings that change the answers, not how many requests run at once.
    return filters.LlmFilter(stage, args.model, stable_hash(tracked), backend, VerdictCache(args.cache), backend.max_concurrency)


def _max_side(text: str) -> int | None:
    """--frame-max-side: a size in px, or `none` (the frame as decoded)."""
    if text.strip().lower() in {"none", "null"}:
        return None
    if not text.strip().isdigit() or int(text) < 16:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size of at least 16 px, nor none")
    return int(text)


def _filter(args: argparse.Namespace) -> int:
    instances = read_instances(args.input)
    source = args.source or ",".join(sorted({inst.source for inst in instances})) or "none"
    if args.command == "length":
        result = filters.filter_answer_length(instances, args.max_words)
    elif args.command == "answerability":
        result = filters.filter_answerability(instances, _llm_filter(args, "answerability"))
    else:
        from virtuebench.judge import get_judge
        from virtuebench.records import stable_hash

        judge_settings = json.loads(args.judge_config)
        judge = get_judge(args.judge, merge_settings(judge_settings, json.loads(args.judge_run_config)), args.judge_cache)
        judge_id = stable_hash([args.judge, judge_settings])
        llm = _llm_filter(args, "difficulty")
        result = filters.filter_difficulty(instances, llm, judge, judge_id, args.frames_dir, args.seed, args.frame_max_side)
    _write_filter_outputs(result, args, source)
    return 0


def _merge(args: argparse.Namespace) -> int:
    instances = [inst for path in args.inputs for inst in read_instances(path)]
    write_instances(instances, args.out)
    summaries = [json.loads(Path(path).read_text()) for path in args.summaries]
    if args.counts:
        write_csv(args.counts, summaries, ["source", "stage", "n_in", "n_removed", "n_invalid", "n_out"])
    if args.paper_counts:
        if not args.candidates:
            raise ValueError("merge --paper-counts needs --candidates (the collected candidates of every curation source)")
        funnel = stats.funnel_counts(read_instances(args.candidates), summaries, instances)
        write_csv(args.paper_counts, stats.beside_paper(funnel), stats.PAPER_COUNT_COLUMNS)
    n_videos = len({inst.video_id for inst in instances})
    if args.run_record:
        # When this merge ran: a file that differs after every merge, for the instances checkpoint to read (rules/sources.smk)
        record = {"merged_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "n_kept": len(instances), "n_videos": n_videos}
        Path(args.run_record).write_text(json.dumps(record) + "\n")
    print(f"merge: {len(instances)} kept questions over {n_videos} videos -> {args.out}", file=sys.stderr)
    return 0


def _export(args: argparse.Namespace) -> int:
    kept = read_instances(args.kept)
    drafts = annotation.read_drafts(args.drafts)
    written = annotation.export_batches(kept, drafts, args.levels, args.frames_dir, args.out, args.batch_size)
    n_drafts = sum(record.get("response") is not None for record in drafts.values())
    print(f"export: {len(kept)} questions, {n_drafts} draft answers, {len(written)} batch file(s) in {args.out}", file=sys.stderr)
    return 0


def _import(args: argparse.Namespace) -> int:
    kept = read_instances(args.kept)
    verified = args.verified if args.verified and Path(args.verified).is_dir() and any(Path(args.verified).glob("*.csv")) else None
    if verified is None and not args.allow_drafts:
        print(
            f"error: no verified annotations in {args.verified or '(annotation.verified_dir not set)'}. Annotate the "
            f"batches in {args.batches} (docs/annotation.md) and put the verified CSVs there, or set "
            "annotation.allow_drafts: true to build an unverified table from the draft answers.",
            file=sys.stderr,
        )
        return 1
    drafts = annotation.read_drafts(args.drafts) if args.allow_drafts else None
    result = annotation.import_annotations(kept, verified, args.levels, drafts)
    write_instances(result.instances, args.out)
    write_csv(args.report, result.report, ["instance_id", "status", "detail"])
    write_csv(args.check, result.checks, ["instance_id", "level", "annotated", "evidence_says", "evidence"])
    statuses = {status: sum(row["status"] == status for row in result.report) for status in ("verified", "draft", "discarded", "left_out")}
    n_checked = sum(bool(inst.evidence) for inst in result.instances)
    print(
        f"import: {len(result.instances)} instances -> {args.out} ({statuses}); evidence check: {n_checked} questions "
        f"with evidence, {len(result.checks)} level(s) disagreeing (listed in {args.check})",
        file=sys.stderr,
    )
    if statuses["draft"]:
        print(f"warning: {statuses['draft']} instances carry UNVERIFIED draft answers (annotation.allow_drafts)", file=sys.stderr)
    return 0


def _stats(args: argparse.Namespace) -> int:
    try:
        categories = json.loads(args.categories)
        if not isinstance(categories, dict) or not all(value in ("perception", "reasoning") for value in categories.values()):
            raise ValueError("not a mapping of task type to perception or reasoning")
    except ValueError as error:  # JSONDecodeError is one
        print(f"error: report.categories: --categories {args.categories!r}: {error}", file=sys.stderr)
        return 2
    instances = stats.with_categories(read_instances(args.instances), categories)
    write_csv(args.composition, stats.composition(instances))
    summary = stats.source_summary(instances)
    write_csv(args.summary_csv, summary)
    Path(args.summary_tex).write_text(stats.summary_tex(summary, f"Sources of the {len(instances)} instances."))
    if args.paper_counts:
        # The whole comparison: the curation funnel's rows (merge --paper-counts), then the instances table's.
        funnel: list[dict[str, str]] = []
        if args.funnel:
            with open(args.funnel, newline="", encoding="utf-8") as handle:
                funnel = list(csv.DictReader(handle))
        write_csv(args.paper_counts, funnel + stats.beside_paper(stats.annotated_counts(instances)), stats.PAPER_COUNT_COLUMNS)
    return 0


def _supplement_sets(args: argparse.Namespace) -> int:
    from virtuebench.curation import supplement

    # question_pool filtered: the curation's kept questions of this source (results/curation/<source>/answerability.parquet)
    pool = {inst.instance_id for inst in read_instances(args.pool)} if args.pool else None
    candidates = read_instances(args.candidates)
    sets = supplement.make_sets(candidates, args.level, args.max_questions, args.seed, pool)
    if args.subtitles:  # supplement.longvideobench_subtitles: interleaved
        sets = {form: supplement.with_subtitles(rows, args.subtitles, args.level, args.frame_sampling) for form, rows in sets.items()}
    write_instances(sets["mcq"], args.out_mcq)
    write_instances(sets["oe"], args.out_oe)
    outside = "" if pool is None else f", {sum(inst.instance_id not in pool for inst in candidates)} outside the filtered pool"
    print(
        f"supplement: {len(candidates)} candidates{outside}; {len(sets['oe'])} open-ended and {len(sets['mcq'])} multiple-choice "
        f"questions at {args.level} frames{' with subtitles' if args.subtitles else ''}",
        file=sys.stderr,
    )
    return 0


def _supplement_table(args: argparse.Namespace) -> int:
    from virtuebench.curation import supplement
    from virtuebench.provenance import NotIntact, require_intact, supplement_problems

    # Nothing published that the records do not support: VirtueBench's scores intact and made from the judgments
    # there now, each supplement judgment of the responses there now (virtuebench.provenance).
    try:
        require_intact([args.scores], args.csv)
    except NotIntact as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    broken = supplement_problems(args.judgments)
    if broken:
        print(
            f"error: refusing to write {args.csv}: {len(broken)} stale supplement judgments file(s): {'; '.join(broken[:3])}; "
            "delete them and rerun the workflow, which judges them again",
            file=sys.stderr,
        )
        return 1
    judgments = {}
    for path in args.judgments:  # results/supplement/judgments/<model>/<source>/<form>.jsonl
        parts = Path(path).parts
        judgments[parts[-3], parts[-2], Path(parts[-1]).stem] = Path(path)
    overall = supplement.virtuebench_overall(args.scores, args.prompt, args.level) if args.scores else {}
    choices = supplement.Choices(
        args.mcq_prompt,
        args.oe_prompt,
        args.mlvu_average,
        args.question_pool,
        args.short_video_frames,
        args.videoevalpro_grader,
        args.videoevalpro_suffix == "yes",
        "interleaved" if args.longvideobench_subtitles == "interleaved" else False,
    )
    # results/supplement/<source>/excluded.csv: the questions each conversion left out, with why
    missing = supplement.missing_videos({Path(path).parent.name: Path(path) for path in args.excluded}) if args.excluded else None
    supplement.write_table(
        judgments, overall, args.models, args.sources, args.level, args.csv, args.tex, choices, missing, args.model_choices
    )
    return 0


def _add_filters(commands: argparse._SubParsersAction) -> None:
    """length | answerability | difficulty: one filter each, IN.parquet -> OUT.parquet, removed CSV, summary JSON."""
    for name in ("length", "answerability", "difficulty"):
        sub = commands.add_parser(name)
        sub.set_defaults(func=_filter)
        sub.add_argument("input")
        sub.add_argument("--source", help="the source's name, for the summary")
        sub.add_argument("--out", required=True)
        sub.add_argument("--removed", required=True)
        sub.add_argument("--summary", required=True)
        if name == "length":
            sub.add_argument("--max-words", type=int, required=True)
            continue
        sub.add_argument("--model", required=True, help="the filter model's registry name")
        sub.add_argument("--model-config", required=True, help="its settings that change its answers (JSON; tracked)")
        sub.add_argument("--model-run-config", default="{}", help="its settings that change only how the job runs (JSON)")
        sub.add_argument("--cache", required=True, help="SQLite cache of decisions")
        sub.add_argument("--decisions", help="JSONL of every decision with the model's reply")
        if name == "difficulty":
            sub.add_argument("--judge", required=True)
            sub.add_argument("--judge-config", required=True, help="the judge's settings that change its verdicts (JSON)")
            sub.add_argument("--judge-run-config", default="{}", help="the judge's settings that change only how it runs (JSON)")
            sub.add_argument("--judge-cache")
            sub.add_argument("--frames-dir", required=True, help="where the single random frames are written")
            sub.add_argument("--seed", type=int, required=True)
            sub.add_argument(
                "--frame-max-side",
                type=_max_side,
                default=filters.FILTER_FRAME_MAX_SIDE,
                help="the single frame's longest side in px, or none (curation.filter_frame_max_side; default %(default)s)",
            )


def _add_merge(commands: argparse._SubParsersAction) -> None:
    """merge: the kept questions of every source -> one table, and the funnel's counts."""
    merge = commands.add_parser("merge")
    merge.add_argument("inputs", nargs="+")
    merge.add_argument("--summaries", nargs="*", default=[], help="filter summaries (JSON) to tabulate in --counts")
    merge.add_argument("--out", required=True)
    merge.add_argument("--counts", help="CSV of the curation funnel: source, stage, n_in, n_removed, n_invalid, n_out")
    merge.add_argument("--run-record", help="JSON saying when this merge ran and what it kept")
    merge.add_argument("--candidates", help="every curation source's collected candidates (for --paper-counts)")
    merge.add_argument("--paper-counts", help="CSV of the funnel's counts, all sources together, beside the paper's")
    merge.set_defaults(func=_merge)


def _add_export(commands: argparse._SubParsersAction) -> None:
    """export: kept questions + draft answers -> annotation batch CSVs."""
    export = commands.add_parser("export")
    export.add_argument("--kept", required=True)
    export.add_argument("--drafts", nargs="*", default=[])
    export.add_argument("--levels", nargs="+", type=int, required=True)
    export.add_argument("--frames-dir", required=True)
    export.add_argument("--batch-size", type=int, required=True)
    export.add_argument("--out", required=True)
    export.set_defaults(func=_export)


def _add_import(commands: argparse._SubParsersAction) -> None:
    """import: verified batches -> the instances table, an import report and the evidence check."""
    imports = commands.add_parser("import")
    imports.add_argument("--kept", required=True)
    imports.add_argument("--verified")
    imports.add_argument("--batches", required=True)
    imports.add_argument("--drafts", nargs="*", default=[])
    imports.add_argument("--allow-drafts", action="store_true")
    imports.add_argument("--levels", nargs="+", type=int, required=True)
    imports.add_argument("--out", required=True)
    imports.add_argument("--report", required=True)
    imports.add_argument("--check", required=True)
    imports.set_defaults(func=_import)


def _add_stats(commands: argparse._SubParsersAction) -> None:
    """stats: counts per source, category and task type."""
    stat = commands.add_parser("stats")
    stat.add_argument("instances")
    stat.add_argument("--composition", required=True)
    stat.add_argument("--summary-csv", required=True)
    stat.add_argument("--summary-tex", required=True)
    stat.add_argument("--funnel", help="merge's --paper-counts CSV: its rows come first in --paper-counts")
    stat.add_argument("--paper-counts", help="CSV of the funnel's and the instances' counts beside the paper's")
    stat.add_argument("--categories", default="{}", help="report.categories as JSON: task types counted in another category")
    stat.set_defaults(func=_stats)


def _add_supplement_sets(commands: argparse._SubParsersAction) -> None:
    """supplement-sets: a source's MCQ and open-ended question sets for the supplementary's Table 1."""
    sets = commands.add_parser("supplement-sets")
    sets.add_argument("candidates")
    sets.add_argument("--level", type=int, required=True)
    sets.add_argument("--max-questions", type=int)
    sets.add_argument("--seed", type=int, required=True)
    sets.add_argument("--pool", help="instances table whose questions alone are kept (supplement.question_pool: filtered)")
    sets.add_argument(
        "--subtitles", help="LongVideoBench's release folder: its subtitles put before each question, placed as its loader interleaves them"
    )
    sets.add_argument("--frame-sampling", choices=("clip", "clip-capped"), default="clip", help="the frame jobs' sampling (--subtitles)")
    sets.add_argument("--out-mcq", required=True)
    sets.add_argument("--out-oe", required=True)
    sets.set_defaults(func=_supplement_sets)


def _add_supplement_table(commands: argparse._SubParsersAction) -> None:
    """supplement-table: the supplementary's Table 1 (MCQ vs open-ended at 64 frames) from its judgments."""
    table = commands.add_parser("supplement-table")
    table.add_argument("--judgments", nargs="+", required=True, help=".../<model>/<source>/<form>.jsonl")
    table.add_argument("--scores", help="results/scores.csv, for the VirtueBench overall column")
    table.add_argument("--prompt", required=True)
    table.add_argument("--level", type=int, required=True)
    table.add_argument("--models", nargs="+", required=True)
    table.add_argument("--sources", nargs="+", required=True)
    table.add_argument("--csv", required=True)
    table.add_argument("--tex", required=True)
    table.add_argument("--mcq-prompt", required=True, help="supplement.mcq_prompt, for the caption")
    table.add_argument("--oe-prompt", required=True, help="supplement.oe_prompt, for the caption")
    table.add_argument("--mlvu-average", choices=("pooled", "m-avg"), required=True, help="supplement.mlvu_average")
    table.add_argument("--question-pool", choices=("all", "filtered"), required=True, help="supplement.question_pool, for the caption")
    table.add_argument(
        "--short-video-frames", choices=("repeat", "cap"), required=True, help="supplement.short_video_frames, for the caption"
    )
    table.add_argument(
        "--videoevalpro-grader", choices=("virtuebench", "authors"), default="virtuebench", help="supplement.videoevalpro_grader"
    )
    table.add_argument(
        "--videoevalpro-suffix", choices=("yes", "no"), default="no", help="whether VideoEval-Pro's OE question had its authors' suffix"
    )
    table.add_argument(
        "--longvideobench-subtitles", choices=("false", "interleaved"), default="false", help="supplement.longvideobench_subtitles"
    )
    table.add_argument("--excluded", nargs="*", help="each source's excluded.csv: questions lost to missing videos go in the caption")
    table.add_argument("--model-choices", default="", help="the models' named registry choices in effect, for the caption")
    table.set_defaults(func=_supplement_table)


def parser() -> argparse.ArgumentParser:
    """The command line: one subcommand per curation step, each run by the function its `func` names."""
    parser = argparse.ArgumentParser(
        prog="python -m virtuebench.curation", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    for add in (_add_filters, _add_merge, _add_export, _add_import, _add_stats, _add_supplement_sets, _add_supplement_table):
        add(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    started = time.monotonic()
    try:
        code = args.func(args)
    except (InstancesError, annotation.AnnotationError, filters.FilterRequestsFailed, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"{args.command}: done in {time.monotonic() - started:.1f} s", file=sys.stderr)
    return code


if __name__ == "__main__":
    # Ctrl-C or SIGTERM: one line, no traceback (its outputs are not written whole; Snakemake removes them)
    sys.exit(run_stoppable(lambda stop: main()))
