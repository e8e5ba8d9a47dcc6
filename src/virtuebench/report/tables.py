"""Tables 1 and 2 of the VirtueBench paper as LaTeX, and as HTML pages for Snakemake's report, from score rows.

Table 1: per model and level, Overall and Perception / Reasoning. Table 2: per model and level,
Overall, Non-refusal and Refusal. A cell is "-" where the model was not run at that level; a table whose every
cell would be "-" (no score of its judge and prompt for any of its models) is refused (`require_rows`). A sampled
model's cell (registry `samples` > 1) is the mean over its runs, then "(SD x)": the run-to-run spread, which the caption
says is not the uncertainty of the mean (that is the 95% interval). Intervals are printed in brackets with
`report.intervals: true`; without, the caption says where they are (scores.csv). A trust score that leaves out judge
failures is marked, and the caption gives its bounds over them (metrics.Score.trust_failed_best/worst).
Each table is built once, its text written through a `Markup` (LATEX or HTML): the two files of a table hold the same
cells and caption, from the same rows.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from virtuebench.metrics import DEFAULT_SCORING, Score, Scoring, TrustWeights
from virtuebench.support.tabular import html_page, html_table, latex_escape


@dataclass(frozen=True)
class Markup:
    """How a table's text is written: `text` escapes plain text, `code` sets a name in type, `small` sets an interval
    small, `mark` is the footnote mark of a trust score that leaves out judge failures, and `table` lays out the title,
    caption, label, levels, subset names and rows ((model, cells), all written already) as the file's whole text."""

    text: Callable[[str], str]
    code: Callable[[str], str]
    small: Callable[[str], str]
    mark: str
    table: Callable[[str, str, str, Sequence[int], Sequence[str], list[tuple[str, list[str]]]], str]


class EmptyTable(ValueError):
    """No score row for a table's judge, prompt and models: every cell would be "-"."""


def require_rows(scores: Sequence[Score], models: Sequence[str], prompt: str, judge: str, source: str = "the scores") -> None:
    """Raise EmptyTable where no row of `scores` (read from `source`) is of `judge`, `prompt` and one of `models`.
    A model without rows, or a level a model was not run at, is a "-" cell of a table that has numbers elsewhere."""
    if any(s.judge == judge and s.prompt == prompt and s.model in models for s in scores):
        return
    held = sorted({(s.judge, s.prompt) for s in scores})
    found = ", ".join(f"judge {j!r} prompt {p!r}" for j, p in held) or "no rows at all"
    raise EmptyTable(
        f"{source}: no judged items for judge {judge!r}, prompt {prompt!r} and models {', '.join(models)} "
        f"(it holds: {found}); the tables would show only '-'"
    )


def _index(scores: Sequence[Score], prompt: str, judge: str) -> dict[tuple[str, str, str], Score]:
    return {(s.model, s.level, s.subset): s for s in scores if s.prompt == prompt and s.judge == judge}


def _interval(low: float | None, high: float | None, markup: Markup) -> str:
    return "" if low is None or high is None else " " + markup.small(f"[{low:.1f}, {high:.1f}]")


def _spread(sd: float | None, markup: Markup) -> str:
    """A sampled model's run-to-run spread, labelled as such after its mean (and interval); nothing for a model run once.
    Not a plus-minus: that reads as the uncertainty of the mean, which the interval is."""
    return "" if sd is None else " " + markup.small(f"(SD {sd:.2f})")


def _cell(index, model: str, level: int, subset: str, markup: Markup, intervals: bool = False, metric: str = "accuracy") -> str:
    score = index.get((model, str(level), subset))
    if score is None:
        return "-"
    if metric == "trust":
        interval = _interval(score.trust_ci_low, score.trust_ci_high, markup) if intervals else ""
        bounded = markup.mark if score.trust_failed_best is not None else ""  # judge failures left out: the caption's bounds
        return ("-" if score.trust is None else f"{score.trust:.2f}") + bounded + interval + _spread(score.trust_sd, markup)
    interval = _interval(score.ci_low, score.ci_high, markup) if intervals else ""
    return f"{score.accuracy:.2f}" + interval + _spread(score.accuracy_sd, markup)


def _samples_note(scores: Sequence[Score], prompt: str, judge: str, models: Sequence[str], intervals: bool, markup: Markup) -> str:
    """The caption's word on the sampled models: how many runs each number averages, and that "(SD x)" is the spread
    from run to run, not the uncertainty of the mean, which the 95% interval is."""
    runs = {s.model: s.samples for s in scores if s.prompt == prompt and s.judge == judge and s.model in models and s.samples > 1}
    if not runs:
        return ""
    named = ", ".join(f"{model} the mean over {runs[model]} sampled runs" for model in models if model in runs)
    over = f"{next(iter(runs.values()))} runs" if len(set(runs.values())) == 1 else "its runs"
    where = "in brackets" if intervals else "in scores.csv"
    return markup.text(
        f"; {named}: (SD x) is the run-to-run spread (SD over {over}), not the uncertainty of the mean; the 95% interval is {where}"
    )


def _choices_note(choices: str, markup: Markup) -> str:
    """The named registry choices of the table's models at the options the run used (config.model_choices), or ""."""
    return f"; model choices: {markup.text(choices)}" if choices else ""


def _judge_options_note(options: str, markup: Markup) -> str:
    """The judge's open decisions at the values the run used (virtuebench.judge.inputs.options_note), or ""."""
    return f"; judge options: {markup.text(options)}" if options else ""


def _interval_note(intervals: bool, markup: Markup) -> str:
    """Where each number's 95% interval is: in brackets, or (not printed) in scores.csv, so that a table without them
    still says they exist."""
    if intervals:
        return markup.text("; in brackets, each number's 95% interval (over videos; docs/statistics.md)")
    return markup.text("; 95% intervals: scores.csv (ci_low, ci_high; trust_ci_low, trust_ci_high), or report.intervals: true")


def _failure_note(scores: Sequence[Score], prompt: str, judge: str, models: Sequence[str], levels: Sequence[int], markup: Markup) -> str:
    """The trust table's footnote: each marked cell's judge failures, left out of its trust score, and the score with
    them all scored as right answers and as wrong ones (metrics: trust_failed_worst, trust_failed_best)."""
    shown = [str(level) for level in levels]
    marked = [
        s
        for s in scores
        if s.prompt == prompt and s.judge == judge and s.model in models and s.level in shown and s.subset == "overall"
        if s.trust_failed_best is not None
    ]
    if not marked:
        return ""
    marked.sort(key=lambda s: (models.index(s.model), shown.index(s.level)))
    cells = "; ".join(
        f"{s.model} at {s.level} frames, {s.n_judge_failed} left out: {s.trust_failed_worst:.2f} to {s.trust_failed_best:.2f}"
        for s in marked
    )
    return f"; {markup.mark} " + markup.text(
        f"judge failures (no verdict) are left out of the trust score; scored all wrong to all right it would be: {cells}"
    )


def _invalid_note(scores: Sequence[Score], prompt: str, judge: str, models: Sequence[str], scoring: Scoring) -> str:
    """The judged items and the invalid ones, and how those count (report.invalid)."""
    rows = [
        s for s in scores if s.prompt == prompt and s.judge == judge and s.model in models and s.level != "all" and s.subset == "overall"
    ]
    dropped = sum(s.n_dropped for s in rows)
    n, invalid = sum(s.n * s.samples for s in rows) + dropped, sum(s.n_invalid for s in rows)  # a sampled model's: every run's
    if scoring.invalid == "drop":
        counted = f"{dropped} without a response or a verdict left out of the denominator (report.invalid: drop), the rest counted as wrong"
        return f"{n} judged items, {invalid} without a valid verdict ({counted})"
    return f"{n} judged items, {invalid} without a valid verdict (counted as wrong)"


def _categories_note(scoring: Scoring, markup: Markup) -> str:
    """The category mapping the perception and reasoning numbers use (report.categories)."""
    mapped = ", ".join(f"{task_type} as {category}" for task_type, category in scoring.categories)
    return markup.text("; categories: the source adapters' mapping" + (f", with {mapped} (report.categories)" if mapped else ""))


def _caption_notes(
    scores: Sequence[Score],
    prompt: str,
    judge: str,
    models: Sequence[str],
    intervals: bool,
    choices: str,
    markup: Markup,
    judge_options: str = "",
    scoring: Scoring = DEFAULT_SCORING,
) -> str:
    """What every table's caption says after its title: the judged and invalid items (and how those count), the
    category mapping, where the intervals are, the sampled models, the model choices and the judge options in effect."""
    notes = markup.text(_invalid_note(scores, prompt, judge, models, scoring)) + _categories_note(scoring, markup)
    notes += _interval_note(intervals, markup)
    notes += _samples_note(scores, prompt, judge, models, intervals, markup) + _choices_note(choices, markup)
    return notes + _judge_options_note(judge_options, markup)


def _setting(prompt: str, judge: str, markup: Markup) -> str:
    """The caption's prompt and judge."""
    return f"prompt {markup.code(prompt)}, judge {markup.code(judge)}"


def _latex_table(
    title: str, caption: str, label: str, levels: Sequence[int], names: Sequence[str], rows: list[tuple[str, list[str]]]
) -> str:
    """A table as LaTeX (booktabs); `title` is the HTML page's, LaTeX has its label."""
    width = len(names)
    spec = "l" + " ".join(["c" * width] * len(levels))
    header = " & ".join(rf"\multicolumn{{{width}}}{{c}}{{{level} frames}}" for level in levels)
    rules = " ".join(rf"\cmidrule(lr){{{2 + i * width}-{1 + (i + 1) * width}}}" for i in range(len(levels)))
    names_row = " & ".join([" & ".join(names)] * len(levels))
    return "\n".join(
        [
            "% Generated by virtuebench.report from results/scores.csv; do not edit by hand.",
            r"\begin{table}[t]",
            r"\centering",
            r"\small",
            rf"\caption{{{caption}}}",
            rf"\label{{{label}}}",
            rf"\begin{{tabular}}{{{spec}}}",
            r"\toprule",
            rf"Model & {header} \\",
            rules,
            rf" & {names_row} \\",
            r"\midrule",
            *(f"{model} & {' & '.join(cells)} \\\\" for model, cells in rows),
            r"\bottomrule",
            r"\end{tabular}",
            r"\end{table}",
            "",
        ]
    )


def _html_table(
    title: str, caption: str, label: str, levels: Sequence[int], names: Sequence[str], rows: list[tuple[str, list[str]]]
) -> str:
    """A table as a page of its own, as Snakemake's report shows an HTML result (in a frame)."""
    header = [
        [("Model", 1, 2), *((f"{level} frames", len(names), 1) for level in levels)],
        [(name, 1, 1) for _ in levels for name in names],
    ]
    return html_page(title, html_table(header, rows, caption=caption, table_id=label))


LATEX = Markup(
    latex_escape, lambda name: rf"\texttt{{{latex_escape(name)}}}", lambda text: rf"{{\scriptsize{text}}}", r"$^\dagger$", _latex_table
)
HTML = Markup(
    html.escape, lambda name: f"<code>{html.escape(name)}</code>", lambda text: f"<small>{text}</small>", "<sup>&dagger;</sup>", _html_table
)


def table2(
    scores: Sequence[Score],
    models: Sequence[str],
    levels: Sequence[int],
    prompt: str,
    judge: str,
    intervals: bool = False,
    choices: str = "",
    judge_options: str = "",
    markup: Markup = LATEX,
    scoring: Scoring = DEFAULT_SCORING,
) -> str:
    index = _index(scores, prompt, judge)
    subsets = [("overall", "Overall"), ("non_refusal", "Non-refusal"), ("refusal", "Refusal")]
    rows = [
        (markup.text(model), [_cell(index, model, level, subset, markup, intervals) for level in levels for subset, _ in subsets])
        for model in models
    ]
    caption = (
        markup.text("Accuracy (%) on the overall, non-refusal and refusal subsets per frame level; ")
        + f"{_setting(prompt, judge, markup)}; {_caption_notes(scores, prompt, judge, models, intervals, choices, markup, judge_options, scoring)}."
    )
    return markup.table("Table 2", caption, "tab:refusal", levels, [name for _, name in subsets], rows)


def table2_trust(
    scores: Sequence[Score],
    models: Sequence[str],
    levels: Sequence[int],
    prompt: str,
    judge: str,
    trust: TrustWeights,
    intervals: bool = False,
    choices: str = "",
    judge_options: str = "",
    markup: Markup = LATEX,
    scoring: Scoring = DEFAULT_SCORING,
) -> str:
    """Table 2's variant with the trust score beside accuracy (virtuebench.metrics.TrustWeights)."""
    index = _index(scores, prompt, judge)
    rows = []
    for model in models:
        cells = []
        for level in levels:
            cells.append(_cell(index, model, level, "overall", markup, intervals))
            cells.append(_cell(index, model, level, "overall", markup, intervals, metric="trust"))
        rows.append((markup.text(model), cells))
    caption = (
        markup.text(f"Accuracy (%) and trust score per frame level: 100 times the mean item score, where {trust.describe()}; ")
        + f"{_setting(prompt, judge, markup)}; {_caption_notes(scores, prompt, judge, models, intervals, choices, markup, judge_options, scoring)}"
        + f"{_failure_note(scores, prompt, judge, models, levels, markup)}."
    )
    return markup.table("Table 2 with the trust score", caption, "tab:trust", levels, ["Acc.", "Trust"], rows)


def table1(
    scores: Sequence[Score],
    models: Sequence[str],
    levels: Sequence[int],
    prompt: str,
    judge: str,
    intervals: bool = False,
    choices: str = "",
    judge_options: str = "",
    markup: Markup = LATEX,
    scoring: Scoring = DEFAULT_SCORING,
) -> str:
    index = _index(scores, prompt, judge)
    rows = []
    for model in models:
        cells = []
        for level in levels:
            cells.append(_cell(index, model, level, "overall", markup, intervals))
            perception = _cell(index, model, level, "perception", markup, intervals)
            reasoning = _cell(index, model, level, "reasoning", markup, intervals)
            cells.append("-" if perception == reasoning == "-" else f"{perception} / {reasoning}")
        rows.append((markup.text(model), cells))
    caption = (
        markup.text("Overall accuracy (%) and Perception / Reasoning accuracy per frame level; ")
        + f"{_setting(prompt, judge, markup)}; {_caption_notes(scores, prompt, judge, models, intervals, choices, markup, judge_options, scoring)}."
    )
    return markup.table("Table 1", caption, "tab:main", levels, ["Overall", "P / R"], rows)
