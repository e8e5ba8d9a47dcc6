"""CVRR-ES scores and tables from Judgment records (published imports and new runs alike).

accuracy(dimension) = correct / (correct + incorrect), over valid verdicts. An empty prediction (the
model answered, with nothing) follows the benchmark's rule, `EMPTY_RULES`: `skip` (the CVRR-ES authors'
scoring, the default here: their evaluation script judges only non-empty predictions, which is why their
Gemini rows have 2,375 of 2,382 items) leaves it out of the dimension and counts it in `n_skipped`, which the
table caption prints; `wrong` scores it as an incorrect verdict. The average is the mean over the 11
dimensions and exists only when all 11 are present.
"""

from __future__ import annotations

import html
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path

from virtuebench.cvrr import DIMENSIONS, SETTINGS, TITLES
from virtuebench.cvrr.published import PUBLISHED_JUDGE
from virtuebench.records import Judgment
from virtuebench.support.tabular import html_page, html_table, latex_escape, write_csv

PROMPT_TO_SETTING = {prompt: setting for setting, prompt in SETTINGS.items()}
TABLE3_PROMPTS = (
    ("standard", "Standard prompting"),
    ("cot", "Chain of Thought (CoT) prompting"),
    ("dscp_step1", "DSCP (Stage 1)"),
    ("dscp", "DSCP (Both stages)"),
)


def setting_of(prompt: str) -> str:
    return PROMPT_TO_SETTING.get(prompt, f"{prompt}_prompting")


EMPTY_RULES = ("skip", "wrong")


@dataclass(frozen=True)
class DimensionScore:
    setting: str
    model: str
    judge: str
    dimension: str
    accuracy: float | None
    n_correct: int
    n_incorrect: int
    n_invalid: int
    n_skipped: int = 0  # empty predictions left out (rule `skip`)


def is_empty_prediction(judgment: Judgment) -> bool:
    """The model answered with nothing (not a failed request: that is an error, counted invalid). The
    authors' published verdicts are taken as they are: their files hold only what they chose to judge."""
    if judgment.judge == PUBLISHED_JUDGE:
        return False
    return judgment.error is None and (judgment.response is None or not judgment.response.strip())


def dimension_scores(judgments: Iterable[Judgment], empty: str = "skip") -> list[DimensionScore]:
    if empty not in EMPTY_RULES:
        raise ValueError(f"empty-prediction rule {empty!r} is not one of {list(EMPTY_RULES)}")
    groups: dict[tuple[str, str, str, str], list[Judgment]] = defaultdict(list)
    for judgment in judgments:
        groups[(setting_of(judgment.prompt), judgment.model, judgment.judge, judgment.category)].append(judgment)
    scores = []
    for (setting, model, judge, dimension), members in sorted(groups.items()):
        skipped = [j for j in members if is_empty_prediction(j)] if empty == "skip" else []
        kept = [j for j in members if not (empty == "skip" and is_empty_prediction(j))]
        # under `wrong`, an empty prediction is an incorrect verdict whatever the judge made of it
        valid = [j for j in kept if j.valid or (empty == "wrong" and is_empty_prediction(j))]
        correct = sum(j.judgement for j in valid if not is_empty_prediction(j))
        accuracy = 100 * correct / len(valid) if valid else None
        scores.append(
            DimensionScore(setting, model, judge, dimension, accuracy, correct, len(valid) - correct, len(kept) - len(valid), len(skipped))
        )
    return scores


@dataclass(frozen=True)
class ModelRow:
    setting: str
    model: str
    judge: str
    accuracies: dict[str, float | None]

    @property
    def average(self) -> float | None:
        values = [self.accuracies.get(d) for d in DIMENSIONS]
        return None if any(v is None for v in values) else sum(values) / len(values)


def model_rows(scores: Sequence[DimensionScore]) -> list[ModelRow]:
    rows: dict[tuple[str, str, str], dict[str, float | None]] = defaultdict(dict)
    for score in scores:
        rows[(score.setting, score.model, score.judge)][score.dimension] = score.accuracy
    settings = list(SETTINGS) + sorted({key[0] for key in rows} - set(SETTINGS))
    return sorted((ModelRow(s, m, j, acc) for (s, m, j), acc in rows.items()), key=lambda r: (settings.index(r.setting), r.model, r.judge))


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _label(row: ModelRow, rows: Sequence[ModelRow]) -> str:
    """The model's name, with the judge added where two judges scored the same (setting, model)."""
    shared = sum(r.setting == row.setting and r.model == row.model for r in rows) > 1
    return f"{row.model} [{row.judge}]" if shared else row.model


def write_table2_csv(rows: Sequence[ModelRow], path: str | Path) -> None:
    """Columns: setting, model, the 11 dimension folder names, average (docs/contract.md)."""
    columns = ["setting", "model", *DIMENSIONS, "average"]
    values = ([row.setting, _label(row, rows), *(_fmt(row.accuracies.get(d)) for d in DIMENSIONS), _fmt(row.average)] for row in rows)
    write_csv(path, (dict(zip(columns, row)) for row in values), columns)


def write_scores_csv(scores: Sequence[DimensionScore], path: str | Path) -> None:
    columns = ["setting", "model", "judge", "dimension", "accuracy", "n_correct", "n_incorrect", "n_invalid", "n_skipped"]
    values = (
        [
            s.setting,
            s.model,
            s.judge,
            s.dimension,
            "" if s.accuracy is None else round(s.accuracy, 4),
            s.n_correct,
            s.n_incorrect,
            s.n_invalid,
            s.n_skipped,
        ]
        for s in scores
    )
    write_csv(path, (dict(zip(columns, row)) for row in values), columns)


#: What a judge's name alone does not say, in the captions.
JUDGE_NOTES = {PUBLISHED_JUDGE: "the authors' published GPT-3.5 verdicts", "rules": "the offline rules judge, docs/judges.md"}
#: The tables' captions (plain text: each file escapes it its own way), before the word on their judges.
TABLE2_CAPTION = (
    "CVRR-ES accuracy (%) per evaluation dimension: correct / (correct + incorrect) of the judge's verdicts; Average is "
    "the mean over the 11 dimensions"
)
TABLE3_CAPTION = (
    "CVRR-ES average accuracy (%) by prompting method. DSCP (Stage 1) uses only the principled instructions of step 1 as a "
    "prefix; DSCP (Both stages) uses the complete dual-step technique"
)


def _judge_order(judge: str) -> tuple[bool, str]:
    return (judge != PUBLISHED_JUDGE, judge)  # the authors' verdicts first, then this run's judges by name


def _judged_columns(rows: Sequence[ModelRow]) -> list[ModelRow]:
    """The columns of one block, those of one judge side by side (so each judge heads one span of columns)."""
    return sorted(rows, key=lambda row: (_judge_order(row.judge), row.model))


def _judge_spans(judges: Sequence[str]) -> list[tuple[str, int]]:
    """(judge, columns) for the row above the model names that puts every column under its judge."""
    return [(judge, sum(1 for _ in group)) for judge, group in groupby(judges)]


def _judge_header(judges: Sequence[str]) -> list[str]:
    """The LaTeX judge row, and the rules under each judge's span."""
    cells, rules, start = [], [], 2
    for judge, width in _judge_spans(judges):
        cells.append(rf"\multicolumn{{{width}}}{{c}}{{\texttt{{{latex_escape(judge)}}}}}")
        rules.append(rf"\cmidrule(lr){{{start}-{start + width - 1}}}")
        start += width
    return ["Judge & " + " & ".join(cells) + r" \\", " ".join(rules)]


def _html_judge_header(judges: Sequence[str]) -> list[tuple[str, int, int]]:
    """The page's judge row: html_table's header cells."""
    return [("Judge", 1, 1), *((f"<code>{html.escape(judge)}</code>", width, 1) for judge, width in _judge_spans(judges))]


def judges_note(judges: Iterable[str], markup: str = "latex") -> str:
    """The caption's word on the judges (LaTeX, or HTML for the pages): one judge for the whole table, or which judges
    head its columns and that numbers under different judges are not comparable one to one."""
    escape, code = (latex_escape, r"\texttt{{{}}}") if markup == "latex" else (html.escape, "<code>{}</code>")
    named = [
        code.format(escape(judge)) + (f" ({escape(JUDGE_NOTES[judge])})" if judge in JUDGE_NOTES else "")
        for judge in sorted(set(judges), key=_judge_order)
    ]
    if len(named) <= 1:
        return "".join(f"; judge {name}" for name in named)
    return f"; each column under its judge ({', '.join(named)}): numbers under different judges are not comparable one to one"


def table2_tex(rows: Sequence[ModelRow], note: str = "") -> str:
    """Dimensions as rows and models as columns, as in the paper; one block per setting, each column under its judge."""
    blocks = []
    for setting in dict.fromkeys(row.setting for row in rows):
        chosen = _judged_columns([row for row in rows if row.setting == setting])
        header = " & ".join(latex_escape(row.model) for row in chosen)  # the judge row above names each one's judge
        lines = [
            rf"\begin{{tabular}}{{l{'c' * len(chosen)}}}",
            r"\toprule",
            rf"\multicolumn{{{len(chosen) + 1}}}{{l}}{{\texttt{{{latex_escape(setting)}}}}} \\",
            *_judge_header([row.judge for row in chosen]),
            rf"Benchmark category & {header} \\",
            r"\midrule",
        ]
        for dimension in DIMENSIONS:
            lines.append(f"{TITLES[dimension]} & " + " & ".join(_fmt(row.accuracies.get(dimension)) for row in chosen) + r" \\")
        lines += [r"\midrule", "Average & " + " & ".join(_fmt(row.average) for row in chosen) + r" \\", r"\bottomrule", r"\end{tabular}"]
        blocks.append("\n".join(lines))
    return "\n".join(
        [
            "% Generated by virtuebench.cvrr; do not edit by hand.",
            r"\begin{table}[t]",
            r"\centering",
            r"\scriptsize",
            rf"\caption{{{latex_escape(TABLE2_CAPTION)}{judges_note(row.judge for row in rows)}{latex_escape(note)}.}}",
            r"\label{tab:cvrr-main}",
            r"\resizebox{\textwidth}{!}{%",
            r"\begin{tabular}{c}",
            "\n\\\\[1ex]\n".join(blocks),
            r"\end{tabular}}",
            r"\end{table}",
            "",
        ]
    )


def table3_rows(rows: Sequence[ModelRow]) -> tuple[list[tuple[str, str]], dict[tuple[str, str, str], float | None]]:
    """Columns (model, judge), those of one judge side by side, and averages keyed by (setting, model, judge): two
    judges never overwrite each other."""
    averages = {(row.setting, row.model, row.judge): row.average for row in rows}
    prompts = {setting_of(p) for p, _ in TABLE3_PROMPTS}
    columns = sorted({(row.model, row.judge) for row in rows if row.setting in prompts}, key=lambda c: (_judge_order(c[1]), c[0]))
    return columns, averages


def _column_label(column: tuple[str, str], columns: list[tuple[str, str]]) -> str:
    """The model's name, with its judge where the table has more than one (the CSV has no judge row)."""
    model, judge = column
    return f"{model} [{judge}]" if len({j for _, j in columns}) > 1 else model


def table3_tex(rows: Sequence[ModelRow], note: str = "") -> str:
    columns, averages = table3_rows(rows)
    lines = [
        "% Generated by virtuebench.cvrr; do not edit by hand.",
        r"\begin{table}[t]",
        r"\centering",
        r"\small",
        rf"\caption{{{latex_escape(TABLE3_CAPTION)}{judges_note(judge for _, judge in columns)}{latex_escape(note)}.}}",
        r"\label{tab:cvrr-prompting}",
        rf"\begin{{tabular}}{{l{'c' * len(columns)}}}",
        r"\toprule",
        *(_judge_header([judge for _, judge in columns]) if columns else []),
        "Prompting method & " + " & ".join(latex_escape(model) for model, _ in columns) + r" \\",
        r"\midrule",
    ]
    for prompt, title in TABLE3_PROMPTS:
        lines.append(f"{title} & " + " & ".join(_fmt(averages.get((setting_of(prompt), m, j))) for m, j in columns) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    return "\n".join(lines)


def table2_html(rows: Sequence[ModelRow], note: str = "") -> str:
    """Table 2 as a page (what Snakemake's report shows): table2_tex's rows, judge row and caption, a table per setting."""
    tables = []
    for setting in dict.fromkeys(row.setting for row in rows):
        chosen = _judged_columns([row for row in rows if row.setting == setting])
        body = [(html.escape(TITLES[d]), [_fmt(row.accuracies.get(d)) for row in chosen]) for d in DIMENSIONS]
        body.append(("Average", [_fmt(row.average) for row in chosen]))
        header = [
            _html_judge_header([row.judge for row in chosen]),
            [("Benchmark category", 1, 1), *((html.escape(row.model), 1, 1) for row in chosen)],
        ]
        tables.append(html_table(header, body, caption=f"<code>{html.escape(setting)}</code>", table_id=setting))
    caption = f"{html.escape(TABLE2_CAPTION)}{judges_note((row.judge for row in rows), 'html')}{html.escape(note)}."
    return html_page("CVRR-ES Table 2", f"<p>{caption}</p>", *tables)


def table3_html(rows: Sequence[ModelRow], note: str = "") -> str:
    """Table 3 as a page: table3_tex's rows, judge row and caption."""
    columns, averages = table3_rows(rows)
    header = [[("Prompting method", 1, 1), *((html.escape(model), 1, 1) for model, _ in columns)]]
    if columns:
        header.insert(0, _html_judge_header([judge for _, judge in columns]))
    body = [(html.escape(title), [_fmt(averages.get((setting_of(prompt), m, j))) for m, j in columns]) for prompt, title in TABLE3_PROMPTS]
    caption = f"{html.escape(TABLE3_CAPTION)}{judges_note((judge for _, judge in columns), 'html')}{html.escape(note)}."
    return html_page("CVRR-ES Table 3", html_table(header, body, caption=caption, table_id="tab:cvrr-prompting"))


def write_table3_csv(rows: Sequence[ModelRow], path: str | Path) -> None:
    columns, averages = table3_rows(rows)
    header = ["prompt", *(_column_label(c, columns) for c in columns)]
    values = ([prompt, *(_fmt(averages.get((setting_of(prompt), m, j))) for m, j in columns)] for prompt, _ in TABLE3_PROMPTS)
    write_csv(path, (dict(zip(header, row)) for row in values), header)


def empty_note(scores: Sequence[DimensionScore], empty: str) -> str:
    if empty == "wrong":
        return "; empty predictions count as incorrect"
    skipped = sum(s.n_skipped for s in scores)
    return f"; {skipped} empty prediction{'s' if skipped != 1 else ''} skipped, as the authors' scoring does"


def missing_note(rows: Sequence[ModelRow]) -> str:
    """Table 3's word on its empty cells: a method not run for a model; for the published columns, that the authors'
    outputs hold standard prompting and DSCP (both stages) only, so their CoT and DSCP (Stage 1) rows need a run."""
    columns, averages = table3_rows(rows)
    if all(averages.get((setting_of(p), m, j)) is not None for p, _ in TABLE3_PROMPTS for m, j in columns):
        return ""
    note = "; -: no judgments of that method for that model"
    if any(judge == PUBLISHED_JUDGE for _, judge in columns):
        note += (
            " (the authors' published outputs hold standard prompting and DSCP (both stages) only: their models' CoT and "
            "DSCP (Stage 1) rows need a run)"
        )
    return note


def write_tables(judgments: Iterable[Judgment], out_dir: str | Path, empty: str = "skip", options: str = "") -> list[ModelRow]:
    """Tables 2 and 3 (.tex, .html, .csv) and scores.csv; `options`: the run's options in effect, for both captions."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    scores = dimension_scores(judgments, empty)
    rows = model_rows(scores)
    options = f"; {options}" if options else ""
    write_scores_csv(scores, out_dir / "scores.csv")
    write_table2_csv(rows, out_dir / "table2.csv")
    (out_dir / "table2.tex").write_text(table2_tex(rows, empty_note(scores, empty) + options))
    write_table3_csv(rows, out_dir / "table3.csv")
    (out_dir / "table3.tex").write_text(table3_tex(rows, missing_note(rows) + options))
    (out_dir / "table2.html").write_text(table2_html(rows, empty_note(scores, empty) + options))
    (out_dir / "table3.html").write_text(table3_html(rows, missing_note(rows) + options))
    return rows
