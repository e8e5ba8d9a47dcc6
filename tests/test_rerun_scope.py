"""Reruns scoped to what changed (config/models.schema.yaml and config/schema.yaml classify every setting, x-rerun):
a model's settings that change its answers rerun exactly its inference, judging and the report; its scheduling and
description settings rerun nothing; a new model adds only its jobs; a new rules version re-judges every rules
judgment and nothing else; unrelated settings rerun nothing."""

import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
import yaml
from helpers.data import REPO
from test_workflow import snakemake

pytestmark = pytest.mark.workflow

SMALL = {
    "source": {"name": "synthetic", "settings": {"seed": 5, "n_videos": 2, "max_duration_s": 140, "width": 64, "height": 36}},
    "levels": [64, 128],
    "models": ["refuse", "guess"],
    "prompts": ["honest"],
    "judge": "rules",
}


def scheduled(result) -> Counter:
    """Jobs per rule in a dry run, and the (model) of each inference job."""
    text = result.stdout + result.stderr
    table = text[text.index("Job stats:") :] if "Job stats:" in text else ""
    jobs = Counter({name: int(count) for name, count in re.findall(r"^(\w+)\s+(\d+)$", table, re.MULTILINE) if name != "total"})
    jobs.update(f"model:{m}" for m in re.findall(r"Asking (\S+) with prompt", text))
    return jobs


@pytest.fixture(scope="module")
def done(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("scope")
    registry = yaml.safe_load((REPO / "config" / "models.yaml").read_text())
    registry["refuse-2"] = {"backend": "refuse", "settings": {"text": "I cannot tell from these frames."}}
    (workdir / "models.yaml").write_text(yaml.safe_dump(registry))
    config = {**SMALL, "model_registry": str(workdir / "models.yaml")}
    result = snakemake(workdir, config=config)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Nothing to be done" in (again := snakemake(workdir, "-n", config=config)).stdout + again.stderr
    return workdir, registry, config


def test_changing_one_model_reruns_only_that_model_and_the_report(done):
    workdir, registry, config = done
    changed = {**registry, "guess": {**registry["guess"], "settings": {"priors": {"colour": "blue"}}}}
    (workdir / "models-changed.yaml").write_text(yaml.safe_dump(changed))
    jobs = scheduled(snakemake(workdir, "-n", config={**config, "model_registry": str(workdir / "models-changed.yaml")}))
    assert jobs["run_inference"] == jobs["model:guess"] == 2 and jobs["judge_responses"] == 2
    assert jobs["model:refuse"] == 0 and jobs["extract_frames"] == 0 and jobs["make_instances"] == 0
    assert jobs["compute_scores"] == jobs["make_tables"] == jobs["make_fig6"] == 1 and jobs["make_fig4"] == 0


def dry_run_with(done, **changes) -> Counter:
    """The jobs a dry run schedules after `changes` to the guess model's registry entry."""
    workdir, registry, config = done
    changed = {**registry, "guess": {**registry["guess"], **changes}}
    (workdir / "models-changed.yaml").write_text(yaml.safe_dump(changed))
    result = snakemake(workdir, "-n", config={**config, "model_registry": str(workdir / "models-changed.yaml")})
    assert result.returncode == 0, result.stderr[-3000:]
    jobs = scheduled(result)
    print(f"\n{sorted(changes)}: {dict(jobs) or 'nothing to be done'}")
    return jobs


@pytest.mark.parametrize(
    "changes",
    [
        {"verified": "a new note on how its route was proven"},
        {"description": "new words"},
        {"provenance": "seen elsewhere"},
        {"gpus": 2, "mem_gb": 99, "runtime_min": 999},
        {"settings": {"max_concurrency": 7}},  # a backend setting that only schedules (x-scheduling-settings)
    ],
    ids=["verified", "description", "provenance", "resources", "concurrency"],
)
def test_description_and_scheduling_edits_rerun_nothing(done, changes):
    jobs = dry_run_with(done, **changes)
    assert sum(jobs.values()) == 0, jobs


@pytest.mark.parametrize(
    "changes",
    [{"family": "a-new-family"}, {"revision": "0123456789abcdef0123456789abcdef01234567"}, {"settings": {"priors": {"count": "7"}}}],
    ids=["family", "revision", "generation"],
)
def test_edits_that_change_the_answers_rerun_that_model_and_the_report(done, changes):
    jobs = dry_run_with(done, **changes)
    assert jobs["run_inference"] == jobs["model:guess"] == 2 and jobs["judge_responses"] == 2
    assert jobs["model:refuse"] == 0 and jobs["extract_frames"] == 0 and jobs["make_instances"] == 0
    assert jobs["compute_scores"] == jobs["make_tables"] == 1


def workflow_with_rules_version(target: Path, version: str) -> Path:
    """A copy of the workflow whose rules judge has another version (its Snakefile puts the copy's src/ first)."""
    target.mkdir(parents=True)
    for name in ("Snakefile", "rules", "config", "src", "profiles"):
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(source, target / name)
    rules = target / "src" / "virtuebench" / "judge" / "rules.py"
    text, count = re.subn(r'^VERSION = "[^"]*"', f'VERSION = "{version}"', rules.read_text(), flags=re.MULTILINE)
    assert count == 1, "the rules judge's VERSION line moved"
    rules.write_text(text)
    return target / "Snakefile"


def test_a_new_rules_version_rejudges_every_rules_judgment_and_nothing_else(done, tmp_path):
    workdir, _, config = done
    snakefile = workflow_with_rules_version(tmp_path / "workflow", "rules/next")
    result = snakemake(workdir, "-n", config=config, snakefile=snakefile)
    assert result.returncode == 0, result.stderr[-3000:]
    jobs = scheduled(result)
    print(f"\nrules version: {dict(jobs)}")
    assert jobs["judge_responses"] == 4  # 2 models x 1 prompt x 2 levels, every one
    assert jobs["run_inference"] == jobs["extract_frames"] == jobs["make_instances"] == 0
    assert jobs["compute_scores"] == 1


def test_adding_a_model_adds_only_its_jobs_and_the_report(done):
    workdir, _, config = done
    jobs = scheduled(snakemake(workdir, "-n", config={**config, "models": ["refuse", "guess", "refuse-2"]}))
    assert jobs["run_inference"] == jobs["model:refuse-2"] == 2 and jobs["judge_responses"] == 2
    assert jobs["extract_frames"] == 0 and jobs["compute_scores"] == 1


def test_unrelated_settings_rerun_nothing(done):
    workdir, _, config = done
    unrelated = {
        **config,
        "judges": {"spare": {"kind": "llm", "model": "m", "api_key_env": None}},
        "cvrr": {"published_commit": "0123abc"},
        "report": {"prompt": "honest"},
    }
    result = snakemake(workdir, "-n", config=unrelated)
    assert result.returncode == 0 and "Nothing to be done" in result.stdout + result.stderr
