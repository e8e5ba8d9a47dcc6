"""CVRR-ES as a benchmark of the workflow (virtuebench.benchmarks): its rules file, the tables and figures it builds by
default, and its config block, `config.cvrr` (the published judge outputs to stand beside new runs, and the scoring's
rule for an empty prediction)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

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
        description="the CVRR-ES authors' judge outputs to put beside new runs: a folder (config/cvrr.yaml: their "
        "repository cloned in data/CVRR-Evaluation-Suite), 'download' (a job of the run fetches them), or null (none)",
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


class PublishedDirError(ValueError):
    """config.cvrr.published_dir names a folder that does not hold the published judge outputs: the run stops at start."""


def published_folder(settings: CvrrTablesSettings, download_to: str) -> str | None:
    """Where the tables' published judge outputs are read from: None (`null`: Table 2 holds this run's rows only),
    `download_to` (`download`: a job of the run's plan fetches them there, which needs the network), or the folder
    configured, checked now: a folder that is not there, or holds no setting folder, stops the run before any job in
    one line that names the setting and what to set instead (a missing input would stop Snakemake in a traceback)."""
    value = settings.published_dir
    if value is None or value == "download":
        return download_to if value == "download" else None
    from virtuebench.cvrr.download import REPOSITORY
    from virtuebench.cvrr.published import find_root
    from virtuebench.records import RecordError

    folder = Path(value)
    if not folder.is_dir():
        why = "is not a folder"
    else:
        try:
            find_root(folder)
            return value
        except RecordError:
            why = "holds no CVRR-ES judge outputs (no standard_prompting or dscp_prompting folder in it or in its Judge-results)"
    clone = folder.parent if folder.name == "Judge-results" else folder
    raise PublishedDirError(
        f"config.cvrr.published_dir: {value} {why}. For the authors' published verdicts beside this run's, clone their "
        f"repository there (git clone https://github.com/{REPOSITORY} {clone}); or set cvrr.published_dir: null (Table 2 without them) "
        "or download (a job of the run fetches them: needs the network)"
    )
