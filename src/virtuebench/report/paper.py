"""The paper's Tables 1 and 2 (VirtueBench, arXiv:2603.07071) as data, the counts their percentages imply, and each of
the paper's numbers beside a run's (results/paper_vs_run.csv and .tex).

The tables are transcribed in data/paper_table1.csv and data/paper_table2.csv under the registry's model names. Each
percentage is k/n for whole k, rounded to two decimals, so each level's rows imply how many items (n), unanswerable
items and perception items the paper scored there: the smallest counts that the most rows fit. The rows that fit
none of these are the paper's anomalies, listed with what they fit instead in data/paper_anomalies.csv (a test holds
the two to each other, so a transcription typo fails it).
"""

from __future__ import annotations

import csv
import html
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from virtuebench.support.tabular import html_page, html_table, latex_escape

if TYPE_CHECKING:
    from virtuebench.metrics import Score

#: The paper's frame levels, and each table's three numbers per level: overall, then its two parts.
PAPER_LEVELS = (64, 128, 256, 512, 1024)
SUBSETS = {1: ("overall", "perception", "reasoning"), 2: ("overall", "non_refusal", "refusal")}
#: The prompt of the paper's Tables 1 and 2 (section 4.1, the honesty instruction): the run's rows compared are its.
PAPER_PROMPT = "honest"
DATA = Path(__file__).parent / "data"
SOURCE = "VirtueBench (arXiv:2603.07071)"

#: A percentage printed to two decimals is k/n within half a hundredth (and a float's error).
ROUNDING = 0.005 + 1e-9
#: Counts are searched up to this: above the paper's 1,328 instances. The smallest counts that fit are taken, so any
#: bound above the true counts finds the same ones.
MOST_ITEMS = 2000

Cells = Mapping[tuple[int, str, int, str], float]  # (table, model, level, subset) -> percent; a "-" cell is absent


def _data_rows(path: Path) -> list[dict[str, str]]:
    """A data file's rows, its header comment (lines starting with #) left out."""
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(line for line in handle if not line.startswith("#")))


@cache
def paper_cells(data: Path = DATA) -> dict[tuple[int, str, int, str], float]:
    """Every number of the paper's Tables 1 and 2: (table, model, level, subset) -> percent."""
    cells = {}
    for table, subsets in SUBSETS.items():
        path = data / f"paper_table{table}.csv"
        for row in _data_rows(path):
            for level in PAPER_LEVELS:
                for subset in subsets:
                    text = row[f"{level}_{subset}"].strip()
                    if text != "-":
                        cells[(table, row["model"], level, subset)] = float(text)
    return cells


@cache
def paper_models(data: Path = DATA) -> tuple[str, ...]:
    """The paper's models (the registry's names), in the tables' order."""
    return tuple(row["model"] for row in _data_rows(data / "paper_table1.csv"))


@dataclass(frozen=True)
class PaperRow:
    """One model's three numbers at one level of one table: overall, and its two parts (Table 1: perception and
    reasoning; Table 2: non-refusal and refusal)."""

    table: int
    model: str
    level: int
    overall: float
    first: float
    second: float

    @property
    def key(self) -> tuple[int, str, int]:
        return (self.table, self.model, self.level)


def paper_rows(cells: Cells) -> list[PaperRow]:
    """The rows of `cells` with all three numbers (a model not run at a level has none)."""
    rows = []
    for table, model, level, subset in cells:
        if subset == "overall":
            parts = [cells.get((table, model, level, name)) for name in SUBSETS[table]]
            if None not in parts:
                rows.append(PaperRow(table, model, level, *parts))  # type: ignore[arg-type]
    return rows


@dataclass(frozen=True)
class LevelCounts:
    """What one level's rows imply: items, unanswerable items and perception items."""

    level: int
    n: int
    unanswerable: int
    perception: int

    def denominators(self, table: int) -> tuple[int, int]:
        """The counts behind a row's two parts: Table 1 perception and reasoning, Table 2 answerable and unanswerable."""
        if table == 1:
            return self.perception, self.n - self.perception
        return self.n - self.unanswerable, self.unanswerable


def count_of(percent: float, n: int) -> int | None:
    """The k of k/n that prints as `percent` (two decimals), or None where no whole k does."""
    if n <= 0:
        return None
    k = round(percent * n / 100)
    return k if abs(100 * k / n - percent) <= ROUNDING else None


def row_fits(row: PaperRow, first: int, second: int) -> bool:
    """Whether the row's parts are k1/first and k2/second and its overall (k1 + k2)/(first + second)."""
    k1, k2 = count_of(row.first, first), count_of(row.second, second)
    return k1 is not None and k2 is not None and abs(100 * (k1 + k2) / (first + second) - row.overall) <= ROUNDING


def _fitting(percents: Sequence[float], most: int) -> np.ndarray:
    """[row, v]: whether percents[row] is k/v for a whole k, for v in 0..most (v = 0 never)."""
    values = np.arange(most + 1, dtype=float)
    wanted = np.asarray(percents, dtype=float)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        k = np.round(wanted * values / 100)
        return (values > 0) & (np.abs(100 * k / values - wanted) <= ROUNDING)


def _best_pair(rows: Sequence[PaperRow], most: int) -> tuple[int, int]:
    """The (first, second) denominators that the most rows fit, the smallest total among equals (then the smallest
    second): an exact search, pruned by each part's own count of fitting rows (a bound on the joint count)."""
    first_counts = _fitting([row.first for row in rows], most).sum(axis=0)
    second_counts = _fitting([row.second for row in rows], most).sum(axis=0)
    firsts = sorted(range(1, most + 1), key=lambda v: (-first_counts[v], v))
    seconds = sorted(range(1, most + 1), key=lambda v: (-second_counts[v], v))
    best: tuple[int, int, int] | None = None  # (-rows fitted, total, second)
    for first in firsts:
        if best is not None and first_counts[first] < -best[0]:
            break
        for second in seconds:
            if best is not None and min(first_counts[first], second_counts[second]) < -best[0]:
                break
            if first + second > most:
                continue
            found = (-sum(row_fits(row, first, second) for row in rows), first + second, second)
            if best is None or found < best:
                best = found
    assert best is not None
    return best[1] - best[2], best[2]


@cache
def implied_counts(data: Path = DATA, most: int = MOST_ITEMS) -> dict[int, LevelCounts]:
    """Each level's counts as the paper's tables imply them: n and unanswerable from Table 2's rows (answerable and
    unanswerable denominators), then perception from Table 1's with that n."""
    rows = paper_rows(paper_cells(data))
    counts = {}
    for level in PAPER_LEVELS:
        answerable, unanswerable = _best_pair([row for row in rows if row.table == 2 and row.level == level], most)
        n = answerable + unanswerable
        table1 = [row for row in rows if row.table == 1 and row.level == level]
        perception = min(range(1, n), key=lambda p: (-sum(row_fits(row, p, n - p) for row in table1), p))
        counts[level] = LevelCounts(level, n, unanswerable, perception)
    return counts


def misfits(cells: Cells, counts: Mapping[int, LevelCounts]) -> list[tuple[int, str, int]]:
    """(table, model, level) of every row that does not fit its level's counts, in the tables' order."""
    return [row.key for row in paper_rows(cells) if not row_fits(row, *counts[row.level].denominators(row.table))]


@dataclass(frozen=True)
class Anomaly:
    """A row of the paper that fits no level's counts: what it fits instead (n and the split: Table 1 perception,
    Table 2 unanswerable; None where no count near the level's fits), and what the numbers say."""

    table: int
    model: str
    level: int
    fits: tuple[int, int] | None
    note: str


@cache
def paper_anomalies(data: Path = DATA) -> dict[tuple[int, str, int], Anomaly]:
    """The known anomalies of the paper's tables (data/paper_anomalies.csv), by (table, model, level)."""
    found = {}
    for row in _data_rows(data / "paper_anomalies.csv"):
        fits = (int(row["fits_n"]), int(row["fits_split"])) if row["fits_n"] else None
        anomaly = Anomaly(int(row["table"]), row["model"], int(row["level"]), fits, row["note"])
        found[(anomaly.table, anomaly.model, anomaly.level)] = anomaly
    return found


def level_note(level: int, table: int) -> str:
    """The anomalies of one level of one table, for the paper-counts table: 'model: note; ...' ('' where none)."""
    notes = [f"{a.model}: {a.note}" for a in paper_anomalies().values() if a.level == level and a.table == table]
    return "; ".join(notes)


# ---------------------------------------------------------------------------------------------
# The paper beside a run

PAPER_VS_RUN_COLUMNS = [
    "model",
    "paper_model",
    "level",
    "subset",
    "tables",
    "paper",
    "run",
    "difference",
    "ci_low",
    "ci_high",
    "outside",
    "n",
    "n_invalid",
    "paper_anomaly",
]
#: The subsets in the order shown, with the paper's tables that print each (overall is in both).
SHOWN = (("overall", (1, 2)), ("perception", (1,)), ("reasoning", (1,)), ("non_refusal", (2,)), ("refusal", (2,)))


class NoPaperRow(ValueError):
    """No model of the run is a row of the paper's tables, or a mapping names a row the paper does not have."""


def paper_rows_of(models: Sequence[str], paper_names: Mapping[str, str]) -> dict[str, str]:
    """{run model: the paper's row}: a model under a paper row's name is that row, `paper_names` maps another (the
    config's report.paper_names); models with neither are left out. A mapping to no row of the paper is an error."""
    known = set(paper_models())
    for model, row in paper_names.items():
        if row not in known:
            raise NoPaperRow(
                f"report.paper_names: {model} -> {row!r}: not a row of the paper's Tables 1 and 2 ({', '.join(paper_models())})"
            )
    mapped = {model: paper_names.get(model, model) for model in models}
    return {model: row for model, row in mapped.items() if row in known}


def _two(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


def paper_vs_run(
    scores: Sequence[Score],
    models: Sequence[str],
    levels: Iterable[int],
    judge: str,
    paper_names: Mapping[str, str],
    prompt: str = PAPER_PROMPT,
) -> list[dict[str, Any]]:
    """One row per number of the paper's Tables 1 and 2 of a model in both the paper and the run, at the run's levels:
    the paper's value, the run's (prompt `prompt`, judge `judge`) with its 95% interval, run - paper, and whether the
    paper's value lies outside the interval ('' where the run has no number or no interval there)."""
    rows_of = paper_rows_of(models, paper_names)
    if not rows_of:
        raise NoPaperRow(
            f"no model of the run ({', '.join(models)}) is a row of the paper's Tables 1 and 2: name it as the paper does "
            "(config/models.yaml) or map it with report.paper_names"
        )
    cells, anomalies = paper_cells(), paper_anomalies()
    index = {(s.model, s.level, s.subset): s for s in scores if s.prompt == prompt and s.judge == judge}
    out = []
    for model, paper_model in rows_of.items():
        for level in sorted(set(levels) & set(PAPER_LEVELS)):
            for subset, tables in SHOWN:
                paper = cells.get((tables[0], paper_model, level, subset))
                if paper is None:
                    continue  # the paper did not run the model at this level
                score = index.get((model, str(level), subset))
                low, high = (score.ci_low, score.ci_high) if score else (None, None)
                outside = "" if low is None or high is None else ("yes" if not low <= paper <= high else "no")
                notes = [anomalies[(t, paper_model, level)].note for t in tables if (t, paper_model, level) in anomalies]
                out.append(
                    {
                        "model": model,
                        "paper_model": paper_model,
                        "level": level,
                        "subset": subset,
                        "tables": " and ".join(map(str, tables)),
                        "paper": f"{paper:.2f}",
                        "run": _two(score.accuracy if score else None),
                        "difference": _two(score.accuracy - paper if score else None),
                        "ci_low": _two(low),
                        "ci_high": _two(high),
                        "outside": outside,
                        "n": score.n if score else "",
                        "n_invalid": score.n_invalid if score else "",
                        "paper_anomaly": "; ".join(notes),
                    }
                )
    return out


SUBSET_NAMES = {
    "overall": "Overall",
    "perception": "Perception",
    "reasoning": "Reasoning",
    "non_refusal": "Non-refusal",
    "refusal": "Refusal",
}


def _caption(rows: Sequence[Mapping[str, Any]], prompt: str, judge: str) -> str:
    """The table's caption as plain text (a dagger marks the anomalous rows)."""
    outside = sum(row["outside"] == "yes" for row in rows)
    compared = sum(row["outside"] != "" for row in rows)
    return (
        f"The numbers of Tables 1 and 2 of {SOURCE} beside this run's (prompt {prompt}, judge {judge}; accuracy in %, "
        f"the run's 95% interval in brackets). A paper value in bold lies outside the run's interval: {outside} of the "
        f"{compared} with an interval. \u2020: a row of the paper whose numbers fit none of its level's implied counts "
        "(paper_vs_run.csv, column paper_anomaly). The paper's judge is GPT-4o."
    )


def _run_cell(row: Mapping[str, Any]) -> str:
    if row["run"] == "":
        return "-"
    return row["run"] + (f" [{row['ci_low']}, {row['ci_high']}]" if row["ci_low"] != "" else "")


HEADER = ("Model", "Paper's row", "Frames", "Subset", "Paper", "Run [95% interval]", "Run - paper")


def paper_vs_run_tex(rows: Sequence[Mapping[str, Any]], prompt: str, judge: str) -> str:
    """The rows as a LaTeX table: the paper's value, the run's with its interval, the difference; a paper value
    outside the run's interval in bold, a paper row of the anomaly list marked."""
    lines = [r"\begin{table}[t]", r"\centering", r"\small", r"\begin{tabular}{llrlrlr}", r"\toprule"]
    lines.append(" & ".join(latex_escape(name) for name in HEADER[:-1]) + r" & Run $-$ paper \\")
    lines.append(r"\midrule")
    for row in rows:
        paper = rf"\textbf{{{row['paper']}}}" if row["outside"] == "yes" else row["paper"]
        paper += r"$^\dagger$" if row["paper_anomaly"] else ""
        lines.append(
            f"{latex_escape(row['model'])} & {latex_escape(row['paper_model'])} & {row['level']} & {SUBSET_NAMES[row['subset']]} & "
            f"{paper} & {_run_cell(row)} & {row['difference'] or '-'} \\\\"
        )
    caption = latex_escape(_caption(rows, prompt, judge)).replace("\u2020", r"$^\dagger$")
    lines += [r"\bottomrule", r"\end{tabular}", f"\\caption{{{caption}}}", r"\end{table}", ""]
    return "\n".join(lines)


def paper_vs_run_html(rows: Sequence[Mapping[str, Any]], prompt: str, judge: str) -> str:
    """The same table as an HTML page (what Snakemake's report shows), the paper's anomaly note on its dagger."""
    body = []
    for row in rows:
        paper = html.escape(row["paper"])
        paper = f"<strong>{paper}</strong>" if row["outside"] == "yes" else paper
        if row["paper_anomaly"]:
            paper += f'<span title="{html.escape(row["paper_anomaly"])}">\u2020</span>'
        cells = [row["paper_model"], str(row["level"]), SUBSET_NAMES[row["subset"]]]
        body.append((html.escape(row["model"]), [*map(html.escape, cells), paper, html.escape(_run_cell(row)), row["difference"] or "-"]))
    table = html_table([[(html.escape(name), 1, 1) for name in HEADER]], body, html.escape(_caption(rows, prompt, judge)))
    return html_page("The paper's Tables 1 and 2 beside the run", table)
