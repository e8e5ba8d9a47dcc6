"""Each switch of docs/choices.md changes what runs (issue 38): flipped from its default on a finished run, a dry run
schedules exactly the jobs that read it, and no other. The cases, one per setting the table names, are in
tests/helpers/choices.py (SWITCHES: the family of folder, the change, the rules due); this file checks that every
setting in the table has one and runs the demo's and the empty curation's. The curation's and the supplement's run
on tests/curation/test_curation_workflow.py's finished curated run, built there once.

A new row's setting (a planned one once its work merges, e.g. `samples`) needs one entry in SWITCHES; the first test
here fails, naming the setting, until it has one."""

from __future__ import annotations

import pytest
import yaml
from helpers.choices import SWITCHES, check_switch, table_settings
from helpers.data import REPO
from helpers.fake_openai import FakeOpenAI, api_entry
from helpers.workflow import scheduled, snakemake

pytestmark = pytest.mark.workflow

TABLE = table_settings()
FAMILIES = {"demo", "curated", "curation-empty"}


def _cases(family: str) -> list:
    """The table's settings whose case runs on `family`'s folder, in the table's order, each with its rows named."""
    return [pytest.param(setting, id=setting) for setting in TABLE if setting in SWITCHES and SWITCHES[setting].family == family]


def test_every_switch_in_the_table_has_a_dry_run_case():
    assert len(TABLE) >= 40, f"only {len(TABLE)} settings read from docs/choices.md; is its table layout intact?"
    missing = {setting: rows for setting, rows in TABLE.items() if setting not in SWITCHES}
    assert not missing, (
        "docs/choices.md names settings with no dry-run case: add to SWITCHES in tests/helpers/choices.py, for each, "
        f"Case(family, change, rules due): {missing}"
    )
    stale = sorted(set(SWITCHES) - set(TABLE))
    assert not stale, f"tests/helpers/choices.py has cases for settings docs/choices.md no longer names: {stale}"
    assert {case.family for case in SWITCHES.values()} <= FAMILIES


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """A finished run with every kind of job the demo's switches reach: two models, `guess` (a reference backend) and
    `api` (OpenAI-compatible, behind a fake server), two prompts and two levels, judged by `rules` (reported) and by
    `llm` (an LLM judge on the same server), whose agreement is measured. Dry runs ask the server nothing."""
    workdir = tmp_path_factory.mktemp("choices")
    registry = yaml.safe_load((REPO / "config" / "models.yaml").read_text())
    with FakeOpenAI() as server:
        registry["api"] = api_entry(server)
        (workdir / "models.yaml").write_text(yaml.safe_dump(registry, sort_keys=False))
        config = {
            "source": {"name": "synthetic", "settings": {"seed": 5, "n_videos": 2, "max_duration_s": 140, "width": 64, "height": 36}},
            "levels": [64, 128],  # both videos reach 128 frames
            "models": ["guess", "api"],
            "prompts": ["honest", "plain"],
            "judge": "rules",
            "judges": {"llm": {"kind": "llm", "model": "fake-judge", "base_url": server.base_url, "api_key_env": None}},
            "compare_judges": [["rules", "llm"]],
            "model_registry": str(workdir / "models.yaml"),
        }
        result = snakemake(workdir, config=config)
        assert result.returncode == 0, result.stderr[-3000:]
        assert server.backend_requests > 0 and server.judge_requests > 0
    assert scheduled(snakemake(workdir, "-n", config=config)) == {}
    return workdir, config


@pytest.mark.parametrize("setting", _cases("demo"))
def test_a_switch_reruns_what_reads_it_on_the_demo(demo, setting):
    workdir, config = demo
    check_switch(setting, SWITCHES[setting], workdir, config)


@pytest.mark.parametrize("setting", _cases("curation-empty"))
def test_a_switch_changes_the_curations_commands_from_empty(tmp_path, monkeypatch, setting):
    """The curation's first steps for LVBench and MovieChat-1K in an empty folder (nothing downloaded: a dry run needs
    no token), with the setting as it is and flipped: their commands differ where the setting reaches them."""
    monkeypatch.delenv("HF_TOKEN", raising=False)
    (tmp_path / "models.yaml").write_text((REPO / "config" / "models.yaml").read_text())
    config = {
        "source": {"name": "virtuebench"},
        "curation": {"sources": ["lvbench", "moviechat-1k"], "filter_model": "refuse", "reference_model": "refuse"},
        "levels": [64],
        "models": ["refuse"],
        "prompts": ["honest"],
        "judge": "rules",
        "model_registry": str(tmp_path / "models.yaml"),
    }
    targets = [f"results/curation/{source}/answer_length.parquet" for source in ("lvbench", "moviechat-1k")]
    check_switch(setting, SWITCHES[setting], tmp_path, config, targets)
