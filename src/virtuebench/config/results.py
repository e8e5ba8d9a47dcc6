"""Where a configuration's results and logs go (config.results), and the check that two configurations' results
folders never write into each other's."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path, PurePath

import yaml

from virtuebench.config.review import Review
from virtuebench.config.schema import with_defaults


def logs_folder(results: str) -> str:
    """The logs folder of a results folder: logs/ for the default results/, logs/<rest> for results/<rest>, else
    <results>/logs (an absolute folder, say on a cluster's scratch, keeps its logs beside it)."""
    path = PurePath(os.path.normpath(results))
    if path == PurePath("results"):
        return "logs"
    if not path.is_absolute() and path.parts[0] == "results":
        return str(PurePath("logs", *path.parts[1:]))
    return str(path / "logs")


#: What the workflow writes directly under a results folder, by folder name: the one list. Plan.res builds no path in a
#: folder not listed here, and a configuration's results folder may not lie in one of another's (results_collision).
RESULTS_FOLDERS = (
    "annotation",
    "browser",
    "curation",
    "frames",
    "judge_agreement",
    "judgments",
    "published",
    "report",
    "responses",
    "sources",
    "stats",
    "supplement",
    "videos",
)


def known_results_folders(config_dir: str | Path) -> dict[str, str]:
    """The results folder of each configuration shipped beside the schema (config/*.yaml: the demo's, CVRR-ES's, the
    paper's), by its file, and the schema's default."""
    config_dir = Path(config_dir)
    folders = {}
    for path in sorted(config_dir.glob("*.yaml")):
        try:
            data = yaml.safe_load(path.read_text())
        except (OSError, yaml.YAMLError):
            continue
        if isinstance(data, dict) and isinstance(data.get("results"), str) and "benchmark" in data:
            folders[f"{config_dir.name}/{path.name}"] = data["results"]
    default = str(with_defaults({}, config_dir / "schema.yaml").get("results", "results"))
    return folders if default in folders.values() else {**folders, "the schema's default": default}


def results_collision(results: str, known: Mapping[str, str], base_dir: str | Path = ".") -> str | None:
    """Why `results` may not be a results folder beside the configurations `known` (name -> results folder), or None:
    it lies in a folder the workflow writes under one of theirs (results/frames, results/report ...), or one of theirs
    lies in a folder the workflow would write under it. Two configurations' results folders may nest otherwise (the demo's
    results/ holds CVRR-ES's results/cvrr and the paper's results/paper)."""
    here = Path(os.path.abspath(base_dir))
    mine = Path(os.path.normpath(here / results))
    for name, other in known.items():
        theirs = Path(os.path.normpath(here / other))
        if mine != theirs and mine.is_relative_to(theirs):
            first = mine.relative_to(theirs).parts[0]
            if first in RESULTS_FOLDERS:
                return f"it is inside {os.path.join(other, first)}, a folder the workflow writes for the results folder {other!r} ({name})"
        if mine != theirs and theirs.is_relative_to(mine):
            first = theirs.relative_to(mine).parts[0]
            if first in RESULTS_FOLDERS:
                return f"the workflow would write {os.path.join(results, first)}, which holds the results folder {other!r} ({name})"
    return None


def check_results(review: Review, config_dir: Path, base_dir: str | Path) -> None:
    given = review.config["results"]
    folder = os.path.normpath(given)
    if os.path.isabs(folder) and Path(folder).is_relative_to(os.path.abspath(base_dir)):
        folder = os.path.relpath(folder, os.path.abspath(base_dir))  # the project folder named in full is the same folder
    if folder == "." or folder.split(os.sep)[0] in ("..", "logs", "config", "rules", "src", "envs", "profiles", "tests", ".snakemake"):
        review.problems.append(
            f"config.results: {given!r} is not allowed: a folder of its own, e.g. results/cvrr "
            "(not the project folder, nor one of its logs, config, rules, src, envs, profiles, tests or .snakemake)"
        )
    elif why := results_collision(given, known_results_folders(config_dir), base_dir):
        review.problems.append(f"config.results: {given!r} is not allowed: {why}; give a folder of its own, e.g. results/mine")
