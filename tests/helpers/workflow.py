"""Running Snakemake from the tests: the tiny demo config, one call that runs the workflow in a folder, what a dry
run schedules and what a real run ran (jobs per rule), and a copy of the workflow with another rules version."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import yaml

from helpers.data import REPO

#: What rereads every judgment: the scores, the paired comparisons, what is drawn from the scores, and the browser (with
#: its folder for Snakemake's report). Fig. 4 and the composition figures read the instances table alone, so no
#: judgment reruns them.
REPORT_JOBS = {"compute_scores": 1, "compare_arms": 1, "make_tables": 1, "make_fig6": 1, "make_fig_levels": 1, "make_browser": 1}
REPORT_JOBS |= {"link_browser": 1, "all": 1}

TINY = {
    "source": {"name": "synthetic", "settings": {"seed": 7, "n_videos": 3, "max_duration_s": 300, "width": 128, "height": 72}},
    "levels": [64, 128, 256],
    "models": ["refuse", "guess", "oracle"],
    "prompts": ["honest", "plain"],
    "judge": "rules",
}

#: Smaller still: two videos of at most 140 s at 64x36, two levels, one prompt (runs a workflow in well under a minute).
SMALL = {
    "source": {"name": "synthetic", "settings": {"seed": 3, "n_videos": 2, "max_duration_s": 140, "width": 64, "height": 36}},
    "levels": [64, 128],
    "models": ["refuse", "guess"],
    "prompts": ["honest"],
    "judge": "rules",
}


def snakemake(
    workdir: Path, *args: str, config: dict | None = None, timeout: int = 1800, snakefile: Path = REPO / "Snakefile"
) -> subprocess.CompletedProcess:
    """Snakemake on `config` (written to workdir/config.yaml) in `workdir`, with the test's interpreter first on PATH.
    `timeout` only ends a hung run: a demo run passed 300 s on 2 cores at load 16 with 4 busy loops (2026-11-28)."""
    (workdir / "config.yaml").write_text(yaml.safe_dump(config or TINY))
    return subprocess.run(command(workdir, *args, snakefile=snakefile), capture_output=True, text=True, env=environment(), timeout=timeout)


def command(workdir: Path, *args: str, snakefile: Path = REPO / "Snakefile") -> list[str]:
    """Snakemake on workdir/config.yaml in `workdir`, 2 cores (the workflow's default profile applies)."""
    return [sys.executable, "-m", "snakemake", "-s", str(snakefile), "--directory", str(workdir)] + [
        "--configfile",
        str(workdir / "config.yaml"),
        "--cores",
        "2",
        *args,
    ]


def environment() -> dict[str, str]:
    """The environment with the test's interpreter first on PATH (the rules call `python`)."""
    return {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])}


def scheduled(result: subprocess.CompletedProcess) -> Counter:
    """The jobs per rule a dry run schedules (its "Job stats:" table), and `model:<name>` per inference job it lists;
    an empty Counter only where Snakemake said "Nothing to be done". Anything else (an error, a changed output
    format) fails, so no test passes on a table it could not read."""
    text = result.stdout + result.stderr
    assert result.returncode == 0, text[-3000:]
    if "Job stats:" not in text:
        assert "Nothing to be done" in text, f"a dry run with neither a job table nor 'Nothing to be done':\n{text[-3000:]}"
        return Counter()
    table = text[text.index("Job stats:") :]
    table = table[: table.index("total")]  # the first table only: a dry run prints one
    jobs = Counter({name: int(count) for name, count in re.findall(r"^(\w+)\s+(\d+)$", table, re.MULTILINE)})
    assert jobs, f"no jobs read from the job table:\n{table}"
    jobs.update(f"model:{model}" for model in re.findall(r"Asking (\S+) with prompt", text))
    return jobs


def executed(result: subprocess.CompletedProcess) -> Counter:
    """The jobs per rule a real run ran: Snakemake reports each as `Finished jobid: N (Rule: NAME)`."""
    text = result.stdout + result.stderr
    assert result.returncode == 0, text[-3000:]
    return Counter(re.findall(r"^Finished jobid: \d+ \(Rule: (\w+)\)$", text, re.MULTILINE))


def workflow_copy(target: Path) -> Path:
    """A copy of the workflow (its Snakefile puts the copy's src/ first); returns the copy's Snakefile."""
    target.mkdir(parents=True)
    for name in ("Snakefile", "rules", "config", "src", "profiles", "envs"):
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(source, target / name)
    return target / "Snakefile"


def workflow_with_rules_version(target: Path, version: str) -> Path:
    """A copy of the workflow whose rules judge has another version."""
    snakefile = workflow_copy(target)
    rules = target / "src" / "virtuebench" / "judge" / "rules.py"
    text, count = re.subn(r'^VERSION = "[^"]*"', f'VERSION = "{version}"', rules.read_text(), flags=re.MULTILINE)
    assert count == 1, "the rules judge's VERSION line moved"
    rules.write_text(text)
    return snakefile
