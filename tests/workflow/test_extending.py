"""docs/extending.md, run as written. Each block marked `<!-- example: POINT FILE [in NAME | append] -->` is added to a
copy of the workflow (helpers.workflow.workflow_copy) as the guide says: a new file, a line in the registry dict NAME,
or text at the end of FILE. Then the copy must differ from this tree in exactly those files, each one the guide's
steps name, and the workflow must run with the addition:

- judge kind: the demo-sized run (helpers.workflow.TINY) judged by a judge of the new kind `always-refuse`, whose
  numbers (every response a refusal: right exactly where the truth is the refusal string, for every model alike) are
  what Table 1 and scores.csv carry under its config name; a setting of the wrong type is refused at start.
- source, model family and benchmark together: the guide's config/toy.yaml, asking the new `constant` model (and the
  reference ones) the new `toy` source's two questions.
- prompt: the guide's config/toy.yaml asks its questions with the new `terse` prompt too; with the judge kind and the
  source, each a module and an entry, the registries list the three toys and the tests that take their lists from the
  registries pass with them; a misspelt prompt is refused at start with the close name.
- a benchmark with tables of its own: the guide's `tally` package, rules file and config, and nothing else (found by its
  `benchmark.py`, placed in CVRR-ES's import layer), run on two of the demo's videos to its own table; its block's
  setting of the wrong type is refused at start, and its package keeps the import layers.
"""

from __future__ import annotations

import csv
import filecmp
import json
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
import yaml
from helpers.data import REPO
from helpers.layers import contract, lint_imports, write_contract
from helpers.workflow import TINY, command, environment, scheduled, snakemake, workflow_copy

GUIDE = REPO / "docs" / "extending.md"
MARKER = re.compile(r"<!-- example: (\S+) (\S+)(?: (in \w+|append|replacing \S+))? -->\n```\w*\n(.*?)```", re.DOTALL)
#: The folders helpers.workflow.workflow_copy copies, and pyproject.toml (the import layers): what the comparison with
#: this tree covers.
COPIED = ("Snakefile", "rules", "config", "src", "profiles", "envs", "pyproject.toml")
SECTIONS = {
    "judge-kind": "A judge kind",
    "source": "A source",
    "model-family": "A model family",
    "prompt": "A prompt",
    "benchmark": "A benchmark",
    "benchmark-tables": "A benchmark",
}

pytestmark = pytest.mark.workflow


def examples(point: str) -> list[tuple[str, str | None, str]]:
    """(file, how: None for a new file, `in NAME`, `append` or `replacing START`, text) of each of the guide's examples
    for `point`."""
    found = [(file, how or None, text) for name, file, how, text in MARKER.findall(GUIDE.read_text()) if name == point]
    assert found, f"docs/extending.md has no example marked {point}"
    return found


def add_example(root: Path, file: str, how: str | None, text: str) -> None:
    path = root / file
    if how is None:
        assert not path.exists(), f"{file} is the guide's new file, but the workflow has one"
        path.parent.mkdir(parents=True, exist_ok=True)  # a new package's folder
        path.write_text(text)
    elif how == "append":
        path.write_text(path.read_text() + text)
    elif how.startswith("replacing "):  # the one line that starts (after its indent) with START
        start = how.removeprefix("replacing ")
        lines = path.read_text().splitlines(keepends=True)
        (i,) = [i for i, line in enumerate(lines) if line.lstrip().startswith(start)]
        path.write_text("".join(lines[:i] + [text] + lines[i + 1 :]))
    else:  # an entry in the registry NAME (NAME = Registry(what, {entries}, ...)): before the line that closes its table
        name = how.removeprefix("in ")
        lines = path.read_text().splitlines(keepends=True)
        start = next(i for i, line in enumerate(lines) if re.match(rf"^{name}\b.*= Registry\($", line))
        end = next(i for i in range(start, len(lines)) if lines[i].strip() == "},")
        path.write_text("".join(lines[:end] + [text] + lines[end:]))


def changed_files(root: Path) -> set[str]:
    """The files of the copy that differ from this tree's, or that it alone has (caches left out)."""
    changed = set()
    for name in COPIED:
        paths = [root / name] if (root / name).is_file() else (root / name).rglob("*")
        for path in paths:
            if path.is_dir() or "__pycache__" in path.parts or ".egg-info" in str(path):
                continue
            relative = path.relative_to(root)
            if not (REPO / relative).is_file() or not filecmp.cmp(path, REPO / relative, shallow=False):
                changed.add(str(relative))
    return changed


def pattern(path: str) -> re.Pattern:
    return re.compile("^" + re.sub(r"<[^>]+>", "[^/]+", re.escape(path).replace(r"\<", "<").replace(r"\>", ">")) + "$")


def guide_steps(point: str) -> list[str]:
    text = GUIDE.read_text()
    section = text.split(f"\n## {SECTIONS[point]}\n", 1)[1].split("\n## ", 1)[0]
    return [path for line in section.splitlines() if re.match(r"^\d+\. ", line) for path in re.findall(r"`([^`\s]+)`", line)]


def add_examples(root: Path, points: list[str]) -> set[str]:
    """The guide's examples for `points` added to the copy at `root`; returns the files they touch."""
    touched = set()
    for point in points:
        for file, how, text in examples(point):
            add_example(root, file, how, text)
            touched.add(file)
    return touched


def assert_only_the_named_files_changed(root: Path, points: list[str], touched: set[str]) -> None:
    assert changed_files(root) == touched
    for point in points:
        named = [pattern(path) for path in guide_steps(point)]
        for file, _, _ in examples(point):
            assert any(step.match(file) for step in named), f"{file} is not among the files the guide's steps for {point} name"


def rows(path: Path) -> list[dict[str, str]]:
    with path.open() as handle:
        return list(csv.DictReader(handle))


def test_the_guide_counts_the_files_its_examples_touch():
    """The table's "Now" column is the number of files each example touches (code and config, no docs or tests)."""
    table = {line.split("|")[1].strip(): line.split("|")[-2].strip() for line in GUIDE.read_text().splitlines() if line.startswith("| a ")}
    for point, row in (
        ("judge-kind", "a judge kind"),
        ("source", "a source"),
        ("prompt", "a prompt"),
        ("model-family", "a model family"),
        ("benchmark-tables", "a benchmark with tables of its own"),
    ):
        assert table[row] == str(len({file for file, _, _ in examples(point)})), row


def test_a_judge_kind_is_a_module_and_a_line(tmp_path):
    root = tmp_path / "workflow"
    snakefile = workflow_copy(root)
    touched = add_examples(root, ["judge-kind"])
    assert touched == {"src/virtuebench/judge/always_refuse.py", "src/virtuebench/judge/kinds.py"}
    assert_only_the_named_files_changed(root, ["judge-kind"], touched)

    work = tmp_path / "run"
    work.mkdir()
    bad = {**TINY, "judges": {"toy": {"kind": "always-refuse", "reason": 5}}, "judge": "toy"}
    refused = snakemake(work, "-n", config=bad, snakefile=snakefile)
    assert refused.returncode != 0 and "config.judges.toy.reason: must be of type string, got 5" in refused.stderr

    config = {**TINY, "judges": {"toy": {"kind": "always-refuse"}}, "judge": "toy"}
    result = snakemake(work, config=config, snakefile=snakefile, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    scores = rows(work / "results" / "scores.csv")
    assert scores and {row["judge"] for row in scores} == {"toy"}
    by_cell = defaultdict(set)
    for row in scores:
        by_cell[row["prompt"], row["level"], row["subset"]].add((row["accuracy"], row["n_correct"], row["n"]))
        if row["subset"] == "refusal" and int(row["n"]):
            assert float(row["accuracy"]) == 100.0, row
        if row["subset"] == "non_refusal":
            assert int(row["n_correct"]) == 0, row
    assert all(len(numbers) == 1 for numbers in by_cell.values()), "every model has the same numbers under this judge"
    table1 = (work / "results" / "table1.tex").read_text()
    assert r"judge \texttt{toy}" in table1
    model_rows = {
        line.split(" & ", 1)[0]: line.split(" & ", 1)[1] for line in table1.splitlines() if re.match(r"^(refuse|guess|oracle) &", line)
    }
    assert len(model_rows) == 3 and len(set(model_rows.values())) == 1, model_rows
    record = json.loads((work / "results" / "judgments" / "toy" / "oracle" / "honest" / "64.jsonl").read_text().splitlines()[0])
    assert (record["judge"], record["judge_version"], record["reason"], record["refusal"]) == (
        "toy",
        "always-refuse/1",
        "taken for a refusal",
        1,
    )


def test_a_source_a_model_family_and_a_benchmark_as_the_guide_adds_them(tmp_path):
    root = tmp_path / "workflow"
    snakefile = workflow_copy(root)
    points = ["source", "model-family", "prompt", "benchmark"]
    touched = add_examples(root, points)
    assert_only_the_named_files_changed(root, points, touched)

    work = tmp_path / "run"
    work.mkdir()
    config = yaml.safe_load((root / "config" / "toy.yaml").read_text())
    result = snakemake(work, config=config, snakefile=snakefile, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    scores = [row for row in rows(work / "results" / "toy" / "scores.csv") if row["subset"] == "overall" and row["level"] == "64"]
    assert {row["prompt"] for row in scores} == {"honest", "terse"}
    overall = {row["model"]: row for row in scores if row["prompt"] == "honest"}
    # The toy questions: the circle is red (the constant and guess models say red), the border orange (neither does).
    assert {model: (row["n_correct"], row["n"]) for model, row in overall.items()} == {
        "refuse": ("0", "2"),
        "guess": ("1", "2"),
        "constant": ("1", "2"),
    }
    for prompt in ("honest", "terse"):
        responses = [
            json.loads(line)
            for line in (work / "results" / "toy" / "responses" / "constant" / prompt / "64.jsonl").read_text().splitlines()
        ]
        assert [(r["instance_id"], r["prompt"], r["response"]) for r in responses] == [("toy_q0", prompt, "red"), ("toy_q1", prompt, "red")]


#: Tests that take their lists from the registries: each must pass with the toys registered, and check them.
REGISTRY_TESTS = (
    "tests/support/test_registry.py::test_every_registry_loads_every_entry_it_lists",
    "tests/test_config.py::test_the_schemas_take_the_registries_names_from_the_code",
    "tests/test_config.py::test_every_judge_kind_is_registered_under_its_name_with_classified_settings",
)


def test_a_judge_kind_a_source_and_a_prompt_are_each_a_module_and_an_entry(tmp_path):
    root = tmp_path / "workflow"
    snakefile = workflow_copy(root)
    points = ["judge-kind", "source", "prompt", "benchmark"]
    touched = add_examples(root, points) - {"config/toy.yaml"}
    assert len(touched) == 2 * 3  # the judge kind, the source and the prompt: a module and an entry each
    assert_only_the_named_files_changed(root, points, touched | {"config/toy.yaml"})
    env = {**environment(), "PYTHONPATH": str(root / "src")}
    listed = subprocess.run(
        [
            sys.executable,
            "-c",
            "from virtuebench.judge.kinds import REGISTRY; from virtuebench.sources import SOURCES; "
            "from virtuebench.prompts import PROMPTS, get_prompt; "
            "print(REGISTRY['always-refuse'].name, SOURCES['toy'].__name__, repr(get_prompt('terse').render('Why?')))",
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert listed.stdout.split(" ", 2) == ["always-refuse", "virtuebench.sources.toy", "'Why?\\nAnswer in at most five words.'\n"], (
        listed.stderr
    )
    # The registry-derived tests, run on the copy's package: they pass with the toys, and run on them.
    derived = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", *REGISTRY_TESTS],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
    )
    assert derived.returncode == 0 and f"{len(REGISTRY_TESTS)} passed" in derived.stdout, derived.stdout[-3000:]

    work = tmp_path / "run"
    work.mkdir()
    config = {**yaml.safe_load((root / "config" / "toy.yaml").read_text()), "prompts": ["terce"]}
    misspelt = snakemake(work, "-n", config=config, snakefile=snakefile)
    assert misspelt.returncode != 0 and "did you mean 'terse'?" in misspelt.stderr, misspelt.stderr[-2000:]


def test_a_benchmark_with_tables_of_its_own_is_a_package_a_rules_file_and_a_config(tmp_path):
    root = tmp_path / "workflow"
    snakefile = workflow_copy(root)
    shutil.copy2(REPO / "pyproject.toml", root / "pyproject.toml")
    touched = add_examples(root, ["benchmark-tables"])
    assert touched == {
        "src/virtuebench/tally/__init__.py",
        "src/virtuebench/tally/benchmark.py",
        "src/virtuebench/tally/__main__.py",
        "rules/tally.smk",
        "config/tally.yaml",
    }
    assert_only_the_named_files_changed(root, ["benchmark-tables"], touched)
    found = subprocess.run(
        [sys.executable, "-m", "virtuebench.benchmarks"], capture_output=True, text=True, env={"PYTHONPATH": str(root / "src")}
    )
    assert "tally: virtuebench.tally.benchmark:BENCHMARK; rules rules/tally.smk; builds tally.csv" in found.stdout, found.stderr[-2000:]
    layers = contract(root / "src" / "virtuebench", root / "pyproject.toml")["layers"]
    assert any("virtuebench.cvrr" in layer and "virtuebench.tally" in layer for layer in layers), layers
    checked = lint_imports(write_contract(tmp_path / "layers.toml", layers), root, src=root / "src")
    assert checked.returncode == 0 and "1 kept, 0 broken" in checked.stdout, checked.stdout[-3000:]

    work = tmp_path / "run"
    work.mkdir()
    config = yaml.safe_load((root / "config" / "tally.yaml").read_text())
    refused = snakemake(work, "-n", config={**config, "tally": {"decimals": "one"}}, snakefile=snakefile)
    assert refused.returncode != 0 and "config.tally.decimals: must be of type integer, got 'one'" in refused.stderr
    result = snakemake(work, config=config, snakefile=snakefile, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    tally = {row["model"]: row for row in rows(work / "results" / "tally" / "tally.csv")}
    assert set(tally) == {"refuse", "guess"} and all(row["level"] == "64" and row["prompt"] == "honest" for row in tally.values())
    # The refuse model refuses every question, and the guess model none (it always names an answer).
    assert (tally["refuse"]["refused"], tally["guess"]["refused"]) == ("100.0", "0.0")
    # The numbers are the judgments' own: the share of items judged right, and of refusals (every one of the refuse model's).
    for model, row in tally.items():
        lines = (work / "results" / "tally" / "judgments" / "rules" / model / "honest" / "64.jsonl").read_text().splitlines()
        records = [json.loads(line) for line in lines]
        right = round(100 * sum(record["judgement"] for record in records) / len(records), 1)
        assert (row["n"], row["right"]) == (str(len(records)), str(right)), model
    again = subprocess.run(
        [*command(work, "-n", snakefile=snakefile), "--quiet", "rules"], capture_output=True, text=True, env=environment(), timeout=300
    )
    assert scheduled(again) == {}, "a finished run of the benchmark has nothing left to do"


def walk_modules() -> list[str]:
    """The modules of the guide's walk of a model setting (docs/extending.md, `<!-- walk: model-setting -->`)."""
    table = GUIDE.read_text().split("<!-- walk: model-setting -->\n", 1)[1].split("\n\n", 1)[0]
    return [line.split("|")[2].strip().strip("`") for line in table.splitlines()[2:]]


def test_a_model_setting_walks_from_the_registry_to_the_backend_crossing_no_module_twice():
    """The walk the guide gives crosses each module once, each step is a file of this tree, the rule side hands the
    job the spec's halves as they are (no module re-splits or re-merges them), and the job reads back the same spec."""
    from virtuebench.config import model_spec
    from virtuebench.models.spec import ModelSpec

    modules = walk_modules()
    assert len(modules) == len(set(modules)) == 7, modules
    for module in modules[:-1]:
        path = REPO / module if "/" in module else REPO / "src" / Path(*module.split(".")).with_suffix(".py")
        assert path.is_file() or (path.with_suffix("") / "__init__.py").is_file(), module
    common = (REPO / "rules" / "common.smk").read_text()
    assert "tracked_settings" not in common and "run_settings" not in common
    assert "return PLAN.model_config(wildcards.model)" in common and "return PLAN.model_run_config(wildcards.model)" in common
    plan = (REPO / "src" / "virtuebench" / "plan.py").read_text()
    assert "json.dumps(self.checked.specs[model].answers, sort_keys=True)" in plan and "tracked_settings" not in plan
    inference = (REPO / "src" / "virtuebench" / "inference.py").read_text()
    assert "backend_settings" not in inference and "merge_settings" not in inference
    entry = yaml.safe_load((REPO / "config" / "models.yaml").read_text())["Qwen3VL-8B"]
    entry = {**entry, "settings": {**entry["settings"], "batch_size": 4}}
    spec = model_spec("Qwen3VL-8B", entry, REPO / "config")
    on_the_shell_line = json.loads(json.dumps(spec.answers, sort_keys=True)), json.loads(json.dumps(spec.run, sort_keys=True))
    assert ModelSpec.from_job("Qwen3VL-8B", *on_the_shell_line) == spec
    assert spec.run["settings"] == {"batch_size": 4} and spec.settings == entry["settings"]
    assert "hub_id" not in spec.settings and spec.hub_id == entry["hub_id"] and spec.frame_pixels == entry["settings"]["max_pixels"]
