"""CVRR-ES as a benchmark of the workflow (virtuebench.benchmarks): its rules file, the tables and figures it builds by
default, and its config block, `config.cvrr` (the published judge outputs to stand beside new runs, and the scoring's
rule for an empty prediction)."""

from __future__ import annotations

from dataclasses import dataclass

from virtuebench.benchmarks import Benchmark
from virtuebench.cvrr.scoring import EMPTY_RULES
from virtuebench.support.settings import setting


@dataclass(frozen=True)
class CvrrTablesSettings:
    """config.cvrr: what its tables are made from beside this workflow's own runs (rules/cvrr.smk reads them)."""

    published_dir: str | None = setting(
        None,
        rerun="answers",
        schema={"type": ["string", "null"]},
        description="the CVRR-ES authors' judge outputs to put beside new runs: a folder, 'download', or null",
    )
    empty_predictions: str = setting(
        "skip",
        rerun="answers",
        schema={"type": "string", "enum": list(EMPTY_RULES)},
        description="an empty prediction: skip (the CVRR-ES authors' scoring; the table caption counts them) or wrong",
    )
    published_commit: str = setting(
        "9d77787",
        rerun="answers",
        schema={"type": "string"},
        description="the commit of the authors' repository that published_dir: download fetches",
    )


BENCHMARK = Benchmark(
    "cvrr",
    rules="rules/cvrr.smk",
    targets=("table2.tex", "table3.tex", "fig1.png", "fig4_dscp_gains.png", "browser/index.html"),
    settings=CvrrTablesSettings,
)
