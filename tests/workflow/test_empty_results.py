"""An empty result is an error (issue 48): a configured level, model or source that yields no item stops the run, with
its config key and why, and exits non-zero; before any job where the config tells (the synthetic demo's items, a
CVRR-ES folder without its annotation files), else once the instances table is made, before any job that reads it."""

from __future__ import annotations

import copy

import pytest
import yaml
from helpers.data import REPO, write_release
from helpers.releases import make_mlvu_release
from helpers.workflow import snakemake

pytestmark = pytest.mark.workflow


def config_of(name: str) -> dict:
    return copy.deepcopy(yaml.safe_load((REPO / "config" / name).read_text()))


def test_a_demo_level_that_holds_no_item_stops_the_run_before_any_job(tmp_path):
    """The demo with levels [64, 100, 2048] (a dry run stops the same way: the check is made before the DAG)."""
    result = snakemake(tmp_path, config={**config_of("config.yaml"), "levels": [64, 100, 2048]})
    assert result.returncode != 0
    assert (
        "virtuebench: an empty result is an error; in the items of source synthetic (planned from its settings):\n"
        "  config.levels[1]: level 100: no item is at this level (the source's items are at levels 64, 128, 256, 512, 1024)\n"
        "  config.levels[2]: level 2048: longer than every video (longest 1,076 s; 2,048 frames at 1 per second need 2,048 s)\n"
    ) in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "results").exists(), "no job ran: no video was written, no frame extracted"


def test_cvrr_on_a_folder_of_published_judge_results_only_stops_naming_the_setting(tmp_path):
    """The researcher's case: source.settings.root holding only the authors' Judge-results gave 0 instances and a closing
    warning. Now: a named error before any job (the published download included), exit non-zero."""
    published = write_release(tmp_path / "CVRR-ES")
    config = config_of("cvrr.yaml")
    config["source"]["settings"]["root"] = str(published)
    result = snakemake(tmp_path, config=config)
    assert result.returncode != 0
    assert (
        f"virtuebench: CVRR-ES: no annotation file in {published} (this folder holds only published judge results, "
        f"{published / 'Judge-results'}/<setting>/<Model>/<dimension>.json; to show them beside new runs, give it as "
        "cvrr.published_dir). Set source.settings.root to the unzipped release"
    ) in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "results").exists(), "no job ran"


def test_a_level_no_item_reaches_in_a_real_sources_table_stops_before_any_job_reads_it(tmp_path, video_factory):
    """A source whose items only its table tells (MLVU, read from its release): the table is made, then the run stops
    naming the level, before any frame is extracted."""
    release = make_mlvu_release(tmp_path / "mlvu", (video_factory(70.4), video_factory(130.4)))
    config = {
        "source": {"name": "mlvu", "settings": {"raw_dir": str(release), "levels": [64, 128]}},
        "levels": [64, 128, 256],
        "models": ["refuse"],
        "prompts": ["honest"],
        "judge": "rules",
    }
    result = snakemake(tmp_path, config=config)
    assert result.returncode != 0
    assert (
        "virtuebench: an empty result is an error; in the items of results/instances.parquet:\n"
        "  config.levels[2]: level 256: longer than every video (longest 130 s; 256 frames at 1 per second need 256 s)\n"
    ) in result.stderr
    assert "virtuebench WARNING: 6 annotation files, 3 items and 1 task of the source were left out" in result.stderr
    assert (tmp_path / "results" / "instances.parquet").is_file() and not (tmp_path / "results" / "frames").exists()
    # The table there, the next run stops at once, before any job.
    again = snakemake(tmp_path, "-n", config=config)
    assert again.returncode != 0 and "config.levels[2]: level 256: longer than every video" in again.stderr
