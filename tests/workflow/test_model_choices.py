"""Named registry choices on a finished run (config/models.yaml `choices`, config.model_choices): switching an option
reruns exactly the models that declare the choice (their inference, judging and the report), and the tables' captions
state the option in effect; picking the default, or switching a choice no model of the run declares, reruns nothing."""

import shutil

import pytest
import yaml
from helpers.data import REPO
from helpers.workflow import REPORT_JOBS, SMALL, scheduled, snakemake

pytestmark = pytest.mark.workflow

TOY_CHOICE = {
    "default": "as-written",
    "description": "a toy choice on the guess backend",
    "evidence": "none: a test",
    "options": {
        "as-written": {"description": "the entry's settings"},
        "other-priors": {"description": "other priors", "settings": {"priors": {"count": "7"}}},
    },
}
ELSEWHERE = {
    "default": "a",
    "description": "declared by a model this run leaves out",
    "evidence": "none",
    "options": {"a": {"description": "a"}, "b": {"description": "b", "settings": {"text": "no"}}},
}


@pytest.fixture(scope="module")
def done(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("choices")
    registry = yaml.safe_load((REPO / "config" / "models.yaml").read_text())
    registry["guess"] = {**registry["guess"], "choices": {"toy_choice": TOY_CHOICE}}
    registry["refuse-2"] = {"backend": "refuse", "choices": {"elsewhere": ELSEWHERE}}
    (workdir / "models.yaml").write_text(yaml.safe_dump(registry))
    config = {**SMALL, "model_registry": str(workdir / "models.yaml")}
    result = snakemake(workdir, config=config)
    assert result.returncode == 0, result.stderr[-3000:]
    return workdir, config


def test_the_captions_state_the_option_in_effect(done):
    workdir, _ = done
    for table in ("table1.tex", "table2.tex", "table2_trust.tex"):
        caption = next(line for line in (workdir / "results" / table).read_text().splitlines() if line.startswith(r"\caption"))
        assert r"model choices: toy\_choice = as-written (default); judge options:" in caption, caption


def test_switching_an_option_reruns_only_the_models_that_declare_it(done):
    workdir, config = done
    jobs = scheduled(snakemake(workdir, "-n", config={**config, "model_choices": {"toy_choice": "other-priors"}}))
    assert jobs == {"run_inference": 2, "model:guess": 2, "judge_responses": 2, **REPORT_JOBS}


@pytest.mark.parametrize("choices", [{"toy_choice": "as-written"}, {"elsewhere": "b"}], ids=["the-default", "no-model-of-the-run"])
def test_the_default_or_a_choice_of_no_model_in_the_run_reruns_nothing(done, choices):
    workdir, config = done
    assert scheduled(snakemake(workdir, "-n", config={**config, "model_choices": choices})) == {}


def test_switched_back_and_run_the_caption_names_the_option(done, tmp_path):
    """The switch itself run (the two guess jobs, judging, the report) in a copy of the finished run, which the other
    tests, in whatever order they come, read as it was made: the captions then name the option."""
    workdir, config = done
    workdir = shutil.copytree(workdir, tmp_path / "copy", symlinks=True)
    result = snakemake(workdir, config={**config, "model_choices": {"toy_choice": "other-priors"}})
    assert result.returncode == 0, result.stderr[-3000:]
    caption = next(line for line in (workdir / "results" / "table1.tex").read_text().splitlines() if line.startswith(r"\caption"))
    assert r"model choices: toy\_choice = other-priors; judge options:" in caption, caption
