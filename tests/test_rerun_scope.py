"""Reruns scoped to what changed: a model's registry entry, a new model, an unrelated report setting."""

import re
from collections import Counter

import pytest
import yaml
from conftest import REPO
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
