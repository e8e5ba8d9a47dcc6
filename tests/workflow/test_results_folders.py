"""Configurations side by side: each writes under its own results folder (config.results), and the Snakefile's
default config/config.yaml is read only where no --configfile is given, so a user's config file is never merged with
the demo's. In a copy of the project, as a user runs it from its folder: a finished (small) demo, then CVRR-ES with
config/cvrr.yaml as documented and without the network, first without the published verdicts' folder, then without its
videos, then on a release in its layout. The demo's dry run then says "Nothing to be done" and not one of its files
changed."""

import csv
import hashlib
import subprocess
import sys

import pytest
import yaml
from helpers.data import make_cvrr_release, write_release
from helpers.offline import offline_environment
from helpers.workflow import SMALL, environment, scheduled, workflow_copy

from virtuebench.config import logs_folder
from virtuebench.support import runlock

pytestmark = pytest.mark.workflow


def run(project, *args, env=None):
    """Snakemake in the project's folder, as a user types it there (no --directory, no --configfile of the tests)."""
    return subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "2", *args],
        cwd=project,
        capture_output=True,
        text=True,
        env=env or environment(),
        timeout=600,
    )


def offline(project):
    """The tests' environment without the network (tests/helpers/offline.py) and without an OpenAI key."""
    return offline_environment(project.parent / "offline", {k: v for k, v in environment().items() if k != "OPENAI_API_KEY"})


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


def demo_results(demo):
    """The demo's results, without CVRR-ES's folder (which the download test, in either order, may have made)."""
    return {path: digest for path, digest in digests(demo / "results").items() if not path.startswith("cvrr/")}


def test_cvrr_beside_a_finished_demo_names_the_missing_videos_then_writes_only_under_its_own_folder(demo):
    before = demo_results(demo)
    # Neither the release nor the clone of the authors' repository: the source's folder is named before any job
    result = run(demo, "--configfile", "config/cvrr.yaml", env=offline(demo))
    assert result.returncode != 0
    text = result.stdout + result.stderr
    assert "unknown setting" not in text, "the demo's source settings were merged into config/cvrr.yaml's"
    assert "virtuebench: cvrr source: root data/CVRR-ES is not a folder" in result.stderr
    assert "github.com/mbzuai-oryx/CVRR-Evaluation-Suite" in result.stderr
    assert not (demo / "logs" / "cvrr" / "make_instances.log").exists(), "a job ran"
    assert demo_results(demo) == before, "the failed CVRR-ES run changed the demo's results"
    # The release, but no clone where config/cvrr.yaml reads the published verdicts: that setting, before any job
    make_cvrr_release(demo / "data" / "CVRR-ES")
    result = run(demo, "--configfile", "config/cvrr.yaml", env=offline(demo))
    assert result.returncode != 0
    assert "virtuebench: config.cvrr.published_dir: data/CVRR-Evaluation-Suite is not a folder." in result.stderr
    assert "set cvrr.published_dir: null" in result.stderr and "Traceback" not in result.stderr
    assert not (demo / "logs" / "cvrr" / "make_instances.log").exists() and demo_results(demo) == before
    assert scheduled(run(demo, "-n")) == {}
    # Then with the clone in place: one test, as the steps follow each other (in two, a random order put the release
    # in place before the run that must miss it)
    write_release(demo / "data" / "CVRR-Evaluation-Suite")  # the clone's Judge-results/, one model
    a_cvrr_run_writes_only_under_its_own_folder(demo)


def a_cvrr_run_writes_only_under_its_own_folder(demo):
    """config/cvrr.yaml as written (one prompt), with its release in data/CVRR-ES and the published verdicts in
    data/CVRR-Evaluation-Suite; without the network, and with the rules judge (if_no_key: rules without OPENAI_API_KEY):
    it runs to Table 2, each column under its judge."""
    config = yaml.safe_load((demo / "config" / "cvrr.yaml").read_text())
    config["prompts"] = ["standard"]
    (demo / "cvrr-offline.yaml").write_text(yaml.safe_dump(config))
    before = {path: digest for path, digest in digests(demo / "results").items() if not path.startswith("cvrr/")}
    result = run(demo, "--configfile", "cvrr-offline.yaml", env=offline(demo))
    assert result.returncode == 0, result.stderr[-3000:]
    cvrr = demo / "results" / "cvrr"
    for name in ("table2.tex", "table2.csv", "table3.tex", "fig1.png", "instances.parquet", "browser/index.html"):
        assert (cvrr / name).is_file(), name
    table2 = (cvrr / "table2.tex").read_text()
    assert [row["model"] for row in csv.DictReader((cvrr / "table2.csv").open())] == ["Tiny", "guess", "refuse"]
    assert r"\multicolumn{1}{c}{\texttt{gpt-3.5-turbo-0125-published}} & \multicolumn{2}{c}{\texttt{rules}} \\" in table2
    assert sorted(p.name for p in (cvrr / "responses").iterdir()) == ["guess", "refuse"]
    assert "<title>CVRR-ES results</title>" in (cvrr / "browser" / "index.html").read_text()  # its own layout
    assert (demo / "logs" / "cvrr" / "make_instances.log").is_file()
    after = {path: digest for path, digest in digests(demo / "results").items() if not path.startswith("cvrr/")}
    assert after == before, "the CVRR-ES run wrote into the demo's results"
    assert scheduled(run(demo, "-n")) == {}
    assert scheduled(run(demo, "-n", "--configfile", "cvrr-offline.yaml")) == {}


def test_cvrr_download_is_in_the_dry_runs_plan_and_without_the_network_names_the_setting(demo):
    """cvrr.published_dir: download, as a user sets it: `snakemake -n` lists the download (before the instances
    checkpoint has run, too), and a run without the network fails it in one line naming the setting that needs none."""
    config = yaml.safe_load((demo / "config" / "cvrr.yaml").read_text())
    config["cvrr"]["published_dir"] = "download"
    # A release of its own, so that the other CVRR-ES test, before or after this one, finds data/CVRR-ES as it expects
    config["source"]["settings"]["root"] = "data/CVRR-ES-download"
    if not (demo / "data" / "CVRR-ES-download").exists():
        make_cvrr_release(demo / "data" / "CVRR-ES-download")
    (demo / "cvrr-download.yaml").write_text(yaml.safe_dump(config))
    plan = scheduled(run(demo, "-n", "--configfile", "cvrr-download.yaml", env=offline(demo)))
    assert plan["download_cvrr_published"] == 1 and plan["import_cvrr_published"] == 1 and plan["make_cvrr_tables"] == 1
    result = run(demo, "results/cvrr/published_judgments.jsonl", "--configfile", "cvrr-download.yaml", env=offline(demo))
    assert result.returncode != 0
    text = result.stdout + result.stderr
    assert "Error in rule download_cvrr_published" in text and "Temporary failure in name resolution" in text
    assert "to run without the network, set cvrr.published_dir to a folder holding the authors' Judge-results" in text
    assert not (demo / "results" / "cvrr" / "published").exists()


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
