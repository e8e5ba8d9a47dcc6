"""Reruns scoped to what changed (config/models.schema.yaml's x-rerun and each judge kind's settings dataclass,
virtuebench.judge.kinds, classify every setting), on one finished run of a small demo: each test changes one thing and
compares the jobs `snakemake -n` schedules, rule by rule, with the exact set that change must rerun. A model's
settings that change its answers rerun exactly its inference, its judging and the report; its scheduling and
description settings, and the interpreter its job runs with, rerun nothing; a new model adds only its jobs; a new
rules version re-judges every rules judgment and nothing else (the curated workflow's filter decisions:
tests/curation/test_curation_workflow.py); unrelated settings rerun nothing."""

import sys
from collections import Counter

import pytest
import yaml
from helpers.data import REPO
from helpers.fake_openai import FakeOpenAI, api_entry
from helpers.workflow import REPORT_JOBS, scheduled, snakemake, workflow_copy, workflow_with_rules_version

pytestmark = pytest.mark.workflow

SMALL = {
    "source": {"name": "synthetic", "settings": {"seed": 5, "n_videos": 2, "max_duration_s": 140, "width": 64, "height": 36}},
    "levels": [64, 128],  # both videos reach 128 frames: every model runs at both levels
    "models": ["refuse", "guess", "api"],
    "prompts": ["honest"],
    "judge": "rules",
}


def one_model_rerun(model: str) -> Counter:
    """The jobs a change to the answers of `model` must rerun: its inference and judging at each of its two levels
    (one prompt), every report step that reads judgments, and nothing upstream (frames, instances)."""
    return Counter({"run_inference": 2, f"model:{model}": 2, "judge_responses": 2, **REPORT_JOBS})


@pytest.fixture(scope="module")
def done(tmp_path_factory):
    """The finished run: refuse and guess (reference backends) and `api`, an OpenAI-compatible model behind a local
    fake server (the server is only needed while it answers; dry runs ask it nothing)."""
    workdir = tmp_path_factory.mktemp("scope")
    registry = yaml.safe_load((REPO / "config" / "models.yaml").read_text())
    registry["refuse-2"] = {"backend": "refuse", "settings": {"text": "I cannot tell from these frames."}}
    with FakeOpenAI() as server:
        registry["api"] = api_entry(server)
        (workdir / "models.yaml").write_text(yaml.safe_dump(registry))
        config = {**SMALL, "model_registry": str(workdir / "models.yaml")}
        result = snakemake(workdir, config=config)
        assert result.returncode == 0, result.stderr[-3000:]
        assert server.backend_requests > 0
    assert scheduled(snakemake(workdir, "-n", config=config)) == {}
    return workdir, registry, config


def dry_run_with(done, model: str, **changes) -> Counter:
    """The jobs a dry run schedules after `changes` to one model's registry entry (`settings` merged key by key)."""
    workdir, registry, config = done
    entry = {**registry[model], **changes}
    if "settings" in changes:
        entry["settings"] = {**(registry[model].get("settings") or {}), **changes["settings"]}
    (workdir / "models-changed.yaml").write_text(yaml.safe_dump({**registry, model: entry}))
    jobs = scheduled(snakemake(workdir, "-n", config={**config, "model_registry": str(workdir / "models-changed.yaml")}))
    print(f"\n{model} {changes}: {dict(jobs) or 'nothing to be done'}")
    return jobs


@pytest.mark.parametrize(
    ("model", "changes"),
    [
        ("guess", {"verified": "a new note on how its route was proven"}),
        ("guess", {"description": "new words"}),
        ("guess", {"provenance": "seen elsewhere"}),
        ("guess", {"gpus": 2, "mem_gb": 99, "runtime_min": 999}),
        ("api", {"settings": {"max_concurrency": 7, "max_retries": 1, "timeout_s": 5.0}}),  # x-scheduling-settings
    ],
    ids=["verified", "description", "provenance", "resources", "concurrency"],
)
def test_description_and_scheduling_edits_rerun_nothing(done, model, changes):
    assert dry_run_with(done, model, **changes) == {}


@pytest.mark.parametrize(
    ("model", "changes"),
    [
        ("guess", {"family": "a-new-family"}),
        ("guess", {"revision": "0123456789abcdef0123456789abcdef01234567"}),
        ("guess", {"settings": {"priors": {"count": "7"}}}),  # the reference backend's own setting
        ("api", {"settings": {"temperature": 0.7}}),  # generation settings of a real backend
        ("api", {"settings": {"max_tokens": 32}}),
        ("api", {"env": "envs/core.yaml"}),  # its software environment
    ],
    ids=["family", "revision", "backend-setting", "temperature", "max_tokens", "env"],
)
def test_edits_that_change_the_answers_rerun_that_model_its_judging_and_the_report(done, model, changes):
    assert dry_run_with(done, model, **changes) == one_model_rerun(model)


def test_building_a_models_virtual_environment_reruns_nothing(done, tmp_path):
    """`make envs` builds .envs/<env>/ beside the Snakefile; from then on the model's jobs run with its interpreter.
    Which interpreter runs a job is not a tracked setting (the registry's `env` is): nothing reruns."""
    workdir, _, config = done
    snakefile = workflow_copy(tmp_path / "workflow")
    venv_python = tmp_path / "workflow" / ".envs" / "api" / "bin" / "python"
    venv_python.parent.mkdir(parents=True)
    venv_python.symlink_to(sys.executable)
    assert scheduled(snakemake(workdir, "-n", config=config, snakefile=snakefile)) == {}
    # ...and the interpreter is used: a forced dry run shows the commands.
    forced = snakemake(workdir, "-n", "--printshellcmds", "--forcerun", "run_inference", config=config, snakefile=snakefile)
    lines = (forced.stdout + forced.stderr).splitlines()
    commands = [line.removeprefix("Shell command:").strip() for line in lines if "-m virtuebench.inference" in line]
    assert len(commands) == 6
    assert all(command.startswith(f"{venv_python} -m") == ("--model api" in command) for command in commands), commands


def test_a_new_rules_version_rejudges_every_rules_judgment_and_nothing_else(done, tmp_path):
    workdir, _, config = done
    snakefile = workflow_with_rules_version(tmp_path / "workflow", "rules/next")
    jobs = scheduled(snakemake(workdir, "-n", config=config, snakefile=snakefile))
    print(f"\nrules version: {dict(jobs)}")
    assert jobs == Counter({"judge_responses": 6, **REPORT_JOBS})  # three models x one prompt x two levels, every one


def test_adding_a_model_adds_only_its_jobs_and_the_report(done):
    workdir, _, config = done
    jobs = scheduled(snakemake(workdir, "-n", config={**config, "models": [*config["models"], "refuse-2"]}))
    print(f"\nmodel added: {dict(jobs)}")
    assert jobs == one_model_rerun("refuse-2")


def test_adding_the_gpt4o_template_as_a_new_model_extracts_no_frames_and_reruns_no_other_model(done):
    """docs/reruns.md's row: copy GPT-4o's entry (max_pixels 200,704) under a new name. The stored frames' size does
    not depend on the configured models (frames.max_pixels), so only the new model's jobs and the report are planned."""
    workdir, registry, config = done
    (workdir / "models-gpt.yaml").write_text(yaml.safe_dump({**registry, "my-gpt": dict(registry["GPT-4o"])}))
    added = {**config, "model_registry": str(workdir / "models-gpt.yaml"), "models": [*config["models"], "my-gpt"]}
    jobs = scheduled(snakemake(workdir, "-n", config=added))
    print(f"\nGPT-4o template added: {dict(jobs)}")
    assert jobs == one_model_rerun("my-gpt")


def test_a_registry_file_of_the_users_own_adds_only_its_models_jobs(done):
    """`model_registry: [the run's registry, my_models.yaml]` (docs/models.md, "Adding your own model"): the registry
    the run was made with, read first, is unchanged, so the dry run plans only the added model's jobs and the report."""
    workdir, _, config = done
    (workdir / "my_models.yaml").write_text(yaml.safe_dump({"mine": {"backend": "guess", "settings": {"priors": {"count": "3"}}}}))
    user = {**config, "model_registry": [config["model_registry"], "my_models.yaml"], "models": [*config["models"], "mine"]}
    jobs = scheduled(snakemake(workdir, "-n", config=user))
    print(f"\nuser registry: {dict(jobs)}")
    assert jobs == one_model_rerun("mine")


def test_unrelated_settings_rerun_nothing(done):
    workdir, _, config = done
    unrelated = {
        **config,
        "judges": {"spare": {"kind": "llm", "model": "m", "api_key_env": None}},
        "cvrr": {"published_commit": "0123abc"},
        "report": {"prompt": "honest"},
    }
    assert scheduled(snakemake(workdir, "-n", config=unrelated)) == {}
