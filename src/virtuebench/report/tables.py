"""Tables 1 and 2 of the VirtueBench paper as LaTeX, from score rows.

Table 1: per model and level, Overall and Perception / Reasoning. Table 2: per model and level,
Overall, Non-refusal and Refusal. A cell is "-" where the model was not run at that level; a table whose every
cell would be "-" (no score of its judge and prompt for any of its models) is refused (`require_rows`). A sampled
model's cell (registry `samples` > 1) is the mean over its runs plus or minus the SD across them (LaTeX $\\pm$), and the caption says so.
"""

from __future__ import annotations

from collections.abc import Sequence

from virtuebench.metrics import Score, TrustWeights
from virtuebench.support.tabular import latex_escape


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


def _interval(low: float | None, high: float | None) -> str:
    return "" if low is None or high is None else rf" {{\scriptsize[{low:.1f}, {high:.1f}]}}"


def _spread(sd: float | None) -> str:
    """A sampled model's spread across its runs, after its mean; nothing for a model run once."""
    return "" if sd is None else rf" $\pm$ {sd:.2f}"


def _cell(index, model: str, level: int, subset: str, intervals: bool = False, metric: str = "accuracy") -> str:
    score = index.get((model, str(level), subset))
    if score is None:
        return "-"
    if metric == "trust":
        return f"{score.trust:.2f}" + _spread(score.trust_sd) + (_interval(score.trust_ci_low, score.trust_ci_high) if intervals else "")
    return f"{score.accuracy:.2f}" + _spread(score.accuracy_sd) + (_interval(score.ci_low, score.ci_high) if intervals else "")


def _samples_note(scores: Sequence[Score], prompt: str, judge: str, models: Sequence[str]) -> str:
    """The caption's word on the sampled models: how many runs each number averages, and what follows the plus-minus sign."""
    runs = {s.model: s.samples for s in scores if s.prompt == prompt and s.judge == judge and s.model in models and s.samples > 1}
    if not runs:
        return ""
    named = ", ".join(f"{latex_escape(model)} averaged over {runs[model]} sampled runs" for model in models if model in runs)
    return f"; {named}, $\\pm$ the SD across runs"


def _choices_note(choices: str) -> str:
    """The named registry choices of the table's models at the options the run used (config.model_choices), or ""."""
    return f"; model choices: {latex_escape(choices)}" if choices else ""


def _interval_note(intervals: bool) -> str:
    return "; in brackets, each number's 95\\% interval (bootstrap over videos)" if intervals else ""


def _invalid_note(scores: Sequence[Score], prompt: str, judge: str, models: Sequence[str]) -> str:
    rows = [
        s for s in scores if s.prompt == prompt and s.judge == judge and s.model in models and s.level != "all" and s.subset == "overall"
    ]
    n, invalid = sum(s.n * s.samples for s in rows), sum(s.n_invalid for s in rows)  # a sampled model's: every run's
    return f"{n} judged items, {invalid} without a valid verdict (counted as wrong)"


def _caption_notes(scores: Sequence[Score], prompt: str, judge: str, models: Sequence[str], intervals: bool, choices: str) -> str:
    """What every table's caption says after its title: the judged and invalid items, the sampled models, the intervals
    and the model choices in effect."""
    notes = _invalid_note(scores, prompt, judge, models) + _samples_note(scores, prompt, judge, models)
    return notes + _interval_note(intervals) + _choices_note(choices)


def _table(caption: str, label: str, levels: Sequence[int], subsets: Sequence[tuple[str, str]], rows: list[str]) -> str:
    width = len(subsets)
    spec = "l" + " ".join(["c" * width] * len(levels))
    header = " & ".join(rf"\multicolumn{{{width}}}{{c}}{{{level} frames}}" for level in levels)
    rules = " ".join(rf"\cmidrule(lr){{{2 + i * width}-{1 + (i + 1) * width}}}" for i in range(len(levels)))
    names = " & ".join([" & ".join(name for _, name in subsets)] * len(levels))
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
            rf" & {names} \\",
            r"\midrule",
            *rows,
            r"\bottomrule",
            r"\end{tabular}",
            r"\end{table}",
            "",
        ]
    )


def table2(
    scores: Sequence[Score],
    models: Sequence[str],
    levels: Sequence[int],
    prompt: str,
    judge: str,
    intervals: bool = False,
    choices: str = "",
) -> str:
    index = _index(scores, prompt, judge)
    subsets = [("overall", "Overall"), ("non_refusal", "Non-refusal"), ("refusal", "Refusal")]
    rows = [
        latex_escape(model)
        + " & "
        + " & ".join(_cell(index, model, level, subset, intervals) for level in levels for subset, _ in subsets)
        + r" \\"
        for model in models
    ]
    caption = (
        f"Accuracy (\\%) on the overall, non-refusal and refusal subsets per frame level; prompt "
        f"\\texttt{{{latex_escape(prompt)}}}, judge \\texttt{{{latex_escape(judge)}}}; "
        f"{_caption_notes(scores, prompt, judge, models, intervals, choices)}."
    )
    return _table(caption, "tab:refusal", levels, subsets, rows)


def table2_trust(
    scores: Sequence[Score],
    models: Sequence[str],
    levels: Sequence[int],
    prompt: str,
    judge: str,
    trust: TrustWeights,
    intervals: bool = False,
    choices: str = "",
) -> str:
    """Table 2's variant with the trust score beside accuracy (virtuebench.metrics.TrustWeights)."""
    index = _index(scores, prompt, judge)
    subsets = [("overall", "Acc."), ("trust", "Trust")]
    rows = []
    for model in models:
        cells = []
        for level in levels:
            cells.append(_cell(index, model, level, "overall", intervals))
            cells.append(_cell(index, model, level, "overall", intervals, metric="trust"))
        rows.append(latex_escape(model) + " & " + " & ".join(cells) + r" \\")
    caption = (
        f"Accuracy (\\%) and trust score per frame level: 100 times the mean item score, where {trust.describe()}; "
        f"prompt \\texttt{{{latex_escape(prompt)}}}, judge "
        f"\\texttt{{{latex_escape(judge)}}}; {_caption_notes(scores, prompt, judge, models, intervals, choices)}."
    )
    return _table(caption, "tab:trust", levels, subsets, rows)


def table1(
    scores: Sequence[Score],
    models: Sequence[str],
    levels: Sequence[int],
    prompt: str,
    judge: str,
    intervals: bool = False,
    choices: str = "",
) -> str:
    index = _index(scores, prompt, judge)
    subsets = [("overall", "Overall"), ("perception_reasoning", "P / R")]
    rows = []
    for model in models:
        cells = []
        for level in levels:
            cells.append(_cell(index, model, level, "overall", intervals))
            perception = _cell(index, model, level, "perception", intervals)
            reasoning = _cell(index, model, level, "reasoning", intervals)
            cells.append("-" if perception == reasoning == "-" else f"{perception} / {reasoning}")
        rows.append(latex_escape(model) + " & " + " & ".join(cells) + r" \\")
    caption = (
        f"Overall accuracy (\\%) and Perception / Reasoning accuracy per frame level; prompt "
        f"\\texttt{{{latex_escape(prompt)}}}, judge \\texttt{{{latex_escape(judge)}}}; "
        f"{_caption_notes(scores, prompt, judge, models, intervals, choices)}."
    )
    return _table(caption, "tab:main", levels, subsets, rows)
