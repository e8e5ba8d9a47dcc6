"""Configurations side by side: each writes under its own results folder (config.results), and the Snakefile's
default config/config.yaml is read only where no --configfile is given, so a user's config file is never merged with
the demo's. In a copy of the project, as a user runs it from its folder: a finished (small) demo, then CVRR-ES with
config/cvrr.yaml as documented, first without its videos, then on a release in its layout. The demo's dry run then
says "Nothing to be done" and not one of its files changed."""

import hashlib
import subprocess
import sys

import pytest
import yaml
from helpers.data import make_cvrr_release
from helpers.workflow import SMALL, environment, scheduled, workflow_copy

from virtuebench.config import logs_folder
from virtuebench.support import runlock

pytestmark = pytest.mark.workflow


def run(project, *args):
    """Snakemake in the project's folder, as a user types it there (no --directory, no --configfile of the tests)."""
    return subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "2", *args],
        cwd=project,
        capture_output=True,
        text=True,
        env=environment(),
        timeout=600,
    )


def digests(folder):
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """A copy of the project whose config/config.yaml is a small demo, run to the end."""
    project = tmp_path_factory.mktemp("project")
    workflow_copy(project / "p")
    project = project / "p"
    (project / "config" / "config.yaml").write_text(yaml.safe_dump(SMALL))
    result = run(project)
    assert result.returncode == 0, result.stderr[-3000:]
    assert scheduled(run(project, "-n")) == {}
    return project


def test_cvrr_beside_a_finished_demo_names_the_missing_videos_then_writes_only_under_its_own_folder(demo):
    before = digests(demo / "results")
    result = run(demo, "--configfile", "config/cvrr.yaml")
    assert result.returncode != 0
    text = result.stdout + result.stderr
    assert "unknown setting" not in text, "the demo's source settings were merged into config/cvrr.yaml's"
    # Named before any job (the source's settings are checked with the config): no job, no log.
    assert "virtuebench: cvrr source: root data/CVRR-ES is not a folder" in result.stderr
    assert "github.com/mbzuai-oryx/CVRR-Evaluation-Suite" in result.stderr and not (demo / "logs" / "cvrr").exists()
    assert digests(demo / "results") == before, "the failed CVRR-ES run changed the demo's results"
    assert scheduled(run(demo, "-n")) == {}
    # Then the same, with its release in place: one test, as the two steps follow each other (in two, a random order
    # put the release in place before the run that must miss it)
    a_cvrr_run_writes_only_under_its_own_folder(demo)


def a_cvrr_run_writes_only_under_its_own_folder(demo):
    """config/cvrr.yaml as written, with its release in data/CVRR-ES; offline: no published outputs (a download) and
    the rules judge (if_no_key: rules without OPENAI_API_KEY)."""
    make_cvrr_release(demo / "data" / "CVRR-ES")
    config = yaml.safe_load((demo / "config" / "cvrr.yaml").read_text())
    config["cvrr"]["published_dir"] = None
    config["prompts"] = ["standard"]
    (demo / "cvrr-offline.yaml").write_text(yaml.safe_dump(config))
    before = {path: digest for path, digest in digests(demo / "results").items() if not path.startswith("cvrr/")}
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "2", "--configfile", "cvrr-offline.yaml"],
        cwd=demo,
        capture_output=True,
        text=True,
        env={k: v for k, v in environment().items() if k != "OPENAI_API_KEY"},
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    cvrr = demo / "results" / "cvrr"
    for name in ("table2.tex", "table2.csv", "table3.tex", "fig1.png", "instances.parquet", "browser/index.html"):
        assert (cvrr / name).is_file(), name
    assert sorted(p.name for p in (cvrr / "responses").iterdir()) == ["guess", "refuse"]
    assert "<title>CVRR-ES results</title>" in (cvrr / "browser" / "index.html").read_text()  # its own layout
    assert (demo / "logs" / "cvrr" / "make_instances.log").is_file()
    after = {path: digest for path, digest in digests(demo / "results").items() if not path.startswith("cvrr/")}
    assert after == before, "the CVRR-ES run wrote into the demo's results"
    assert scheduled(run(demo, "-n")) == {}
    assert scheduled(run(demo, "-n", "--configfile", "cvrr-offline.yaml")) == {}


def test_results_and_logs_folders():
    assert logs_folder("results") == "logs"
    assert logs_folder("results/") == "logs"
    assert logs_folder("results/cvrr") == "logs/cvrr"
    assert logs_folder("results/paper/run2") == "logs/paper/run2"
    assert logs_folder("runs/a") == "runs/a/logs"
    assert logs_folder("/scratch/me/vb") == "/scratch/me/vb/logs"
    assert runlock.lock_path("results") == runlock.LOCK_PATH
    assert runlock.lock_path("results/cvrr") != runlock.lock_path("results/paper")
    assert runlock.lock_path("results/cvrr").startswith(runlock.STATE_ROOT + "/")
