"""Writing tables, for every stage alike: CSV files (written whole or not at all) and LaTeX escaping.

A support module: it imports nothing of the stages, so sources, curation, metrics, report and cvrr can
all write their CSVs and LaTeX through it.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from virtuebench.support.faults import naming

_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def write_csv(path: str | Path, rows: Iterable[Mapping[str, Any]], columns: Sequence[str] | None = None) -> int:
    """Rows (mappings) as a CSV with a header, columns in `columns` order (default: the first row's keys);
    atomic: a reader never sees half a file. A failed write (a full disk) names `path`. Returns the number of rows written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = list(rows)
    if columns is None:
        columns = list(rows[0]) if rows else []
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with naming(path), tmp.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(columns))
            writer.writeheader()
            writer.writerows(rows)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)  # a full disk's half file is not left beside the table
        raise
    return len(rows)


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(char, char) for char in text)
