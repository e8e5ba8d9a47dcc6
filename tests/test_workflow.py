"""Snakemake end to end on a tiny config: outputs, the analytic check on `refuse`, frame codes,
traceability of every score, resumability of the whole run, broken videos, lint and config errors."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import REPO
from PIL import Image

from virtuebench.instances import read_instances
from virtuebench.metrics import compute_scores
from virtuebench.records import Judgment, load_records
from virtuebench.sources.synthetic import read_second_code

pytestmark = pytest.mark.workflow

TINY = {
    "source": {"name": "synthetic", "settings": {"seed": 7, "n_videos": 3, "max_duration_s": 300, "width": 128, "height": 72}},
    "levels": [64, 128, 256],
    "models": ["refuse", "guess", "oracle"],
    "prompts": ["honest", "plain"],
    "judge": "rules",
}
OUTPUTS = ["table1.tex", "table2.tex", "fig4.png", "fig6.png", "scores.csv", "comparisons.csv", "table2_trust.tex", "fig_levels.png"]
OUTPUTS += ["fig3_composition.png", "supplement/fig1_sources.png", "browser/index.html"]


def snakemake(workdir: Path, *args: str, config: dict | None = None, timeout: int = 300) -> subprocess.CompletedProcess:
    (workdir / "config.yaml").write_text(yaml.safe_dump(config or TINY))
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])}
    command = [
        sys.executable,
        "-m",
        "snakemake",
        "-s",
        str(REPO / "Snakefile"),
        "--directory",
        str(workdir),
        "--configfile",
        str(workdir / "config.yaml"),
        "--cores",
        "2",
        *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=timeout)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("workflow")
    result = snakemake(workdir)
    assert result.returncode == 0, result.stderr[-4000:]
    return workdir


def test_demo_outputs_exist(run):
    for name in OUTPUTS:
        assert (run / "results" / name).stat().st_size > 0, name
    table2 = (run / "results" / "table2.tex").read_text()
    assert "refuse &" in table2 and "guess &" in table2 and "oracle &" in table2 and "256 frames" in table2


def test_refuse_scores_match_the_analytic_values(run):
    instances = read_instances(run / "results" / "instances.parquet")
    rows = list(csv.DictReader((run / "results" / "scores.csv").open()))
    refuse = {(r["prompt"], r["level"], r["subset"]): float(r["accuracy"]) for r in rows if r["model"] == "refuse"}
    for level in TINY["levels"]:
        present = [i for i in instances if level in i.answers]
        share = 100 * sum(i.is_unanswerable(level) for i in present) / len(present)
        for prompt in TINY["prompts"]:
            assert refuse[(prompt, str(level), "refusal")] == 100.0
            assert refuse[(prompt, str(level), "non_refusal")] == 0.0
            assert refuse[(prompt, str(level), "overall")] == pytest.approx(share, abs=1e-3)
    guess = [r for r in rows if r["model"] == "guess" and r["subset"] == "refusal"]
    assert guess and all(float(r["accuracy"]) == 0.0 for r in guess)


def test_every_extracted_frame_shows_its_second(run):
    checked = 0
    for manifest_path in (run / "results" / "frames").glob("*/manifest.json"):
        manifest = json.loads(manifest_path.read_text())
        for frames in manifest["levels"].values():
            for timestamp, name in zip(frames["timestamps"], frames["files"]):
                assert read_second_code(Image.open(manifest_path.parent / name)) == int(timestamp)
                checked += 1
    assert checked > 64 * 3


def test_the_oracle_reading_the_frames_is_right_at_every_level_with_the_honest_prompt(run):
    rows = list(csv.DictReader((run / "results" / "scores.csv").open()))
    oracle = {(r["prompt"], r["level"]): r for r in rows if r["model"] == "oracle" and r["subset"] == "overall"}
    for level in TINY["levels"]:
        row = oracle[("honest", str(level))]
        assert (float(row["accuracy"]), row["n_correct"], row["n_invalid"]) == (100.0, row["n"], "0"), row
    assert float(oracle[("plain", "all")]["accuracy"]) < 100.0  # without the instruction it guesses
    effect = next(
        r
        for r in csv.DictReader((run / "results" / "comparisons.csv").open())
        if (r["kind"], r["model_a"], r["level"], r["subset"]) == ("prompt", "oracle", "all", "refusal")
    )
    assert (effect["prompt_a"], effect["prompt_b"], float(effect["difference"])) == ("honest", "plain", 100.0)
    # Three videos allow 2^3 sign patterns: no test over videos can be sure of anything, and this one says so.
    assert effect["n_videos"] == "3" and float(effect["p_value"]) > 0.05 and effect["holds"] == "False"


def test_the_demo_results_browser_opens_in_a_real_browser(run, tmp_path):
    from test_browser import click_through

    site = run / "results" / "browser"
    assert (site / "index.html").is_file() and len(list((site / "items").glob("*.html"))) == 15
    shots = Path(os.environ.get("VB_SCREENSHOTS", tmp_path / "screenshots"))
    seen = click_through(site, shots)
    assert seen["title"].startswith("Item ") and "Ground truth" in seen["text"] and "oracle" in seen["text"]
    assert seen["thumbs"] == 64 and "thumbs/" in seen["image"] and seen["focused"] >= 1
    print(f"\ndemo site screenshots: {shots}")


def test_every_score_traces_back_to_judgment_records(run):
    judgments = [j for path in (run / "results" / "judgments").rglob("*.jsonl") for j in load_records(path, Judgment)]
    assert all(j.video_id for j in judgments)
    fields = ("n_correct", "n", "ci_low", "ci_high", "trust", "trust_ci_low", "trust_ci_high")
    recomputed = {
        (s.model, s.prompt, s.level, s.subset): tuple(str(getattr(s, f) if getattr(s, f) is not None else "") for f in fields)
        for s in compute_scores(judgments)
    }
    rows = list(csv.DictReader((run / "results" / "scores.csv").open()))
    assert {(r["model"], r["prompt"], r["level"], r["subset"]): tuple(r[f] for f in fields) for r in rows} == recomputed
    # and every judgment's response is the one in the responses file
    for path in (run / "results" / "judgments" / "rules").rglob("*.jsonl"):
        responses_path = run / "results" / "responses" / path.relative_to(run / "results" / "judgments" / "rules")
        responses = {json.loads(line)["instance_id"]: json.loads(line)["response"] for line in responses_path.read_text().splitlines()}
        assert {j.instance_id: j.response for j in load_records(path, Judgment)} == responses


def test_second_run_has_nothing_to_do(run):
    result = snakemake(run, "-n")
    assert result.returncode == 0
    assert "Nothing to be done" in result.stdout + result.stderr


def test_broken_video_is_recorded_counted_and_named(tmp_path):
    first = snakemake(tmp_path, "results/instances.parquet")
    assert first.returncode == 0, first.stderr[-3000:]
    broken = tmp_path / "results" / "videos" / "syn01.mp4"
    broken.write_bytes(b"\x00" * 1000)  # in place: the checkpoint's output folder stays as it was
    result = snakemake(tmp_path, "--keep-going")
    assert result.returncode == 0, result.stderr[-3000:]
    manifest = json.loads((tmp_path / "results" / "frames" / "syn01" / "manifest.json").read_text())
    assert "syn01.mp4" in manifest["error"]
    assert "syn01.mp4" in result.stderr and "no valid verdict" in result.stderr
    invalid = list(csv.DictReader((tmp_path / "results" / "invalid_items.csv").open()))
    assert invalid and all(row["instance_id"].startswith("syn01_") for row in invalid)
    scores = list(csv.DictReader((tmp_path / "results" / "scores.csv").open()))
    overall64 = next(r for r in scores if (r["model"], r["prompt"], r["level"], r["subset"]) == ("refuse", "honest", "64", "overall"))
    assert int(overall64["n"]) == 15 and int(overall64["n_invalid"]) == 5
    honest_invalid = sum(row["prompt"] == "honest" for row in invalid)
    assert f", {honest_invalid} without a valid verdict" in (tmp_path / "results" / "table2.tex").read_text()

    # Strict mode: that video's frame job fails naming the file; --keep-going extracts the others.
    shutil.rmtree(tmp_path / "results" / "frames")
    strict = {**TINY, "frames": {"on_broken_video": "fail"}}
    result = snakemake(tmp_path, "--keep-going", config=strict)
    assert result.returncode != 0
    assert "syn01.mp4" in result.stdout + result.stderr
    assert (tmp_path / "results" / "frames" / "syn00" / "manifest.json").exists()
    assert (tmp_path / "results" / "frames" / "syn02" / "manifest.json").exists()
    assert not (tmp_path / "results" / "frames" / "syn01").exists()


def test_lint_is_clean(tmp_path):
    result = snakemake(tmp_path, "--lint")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Lints for" not in result.stdout + result.stderr, result.stdout + result.stderr


@pytest.mark.parametrize(
    "change,message",
    [
        ({"colour": 1}, "config: unknown key(s) 'colour'"),
        ({"prompts": ["honest", "sneaky"]}, "config.prompts[1]: 'sneaky' is not allowed; allowed values: honest, plain"),
        ({"models": ["refuse", "gpt-9"]}, "config.models[1]: 'gpt-9' is not in the model registry"),
        ({"levels": "64"}, "config.levels: must be of type array"),
        ({"judge": "oracle"}, "config.judge: 'oracle' is not allowed; allowed values: rules"),
    ],
)
def test_bad_config_stops_the_run_naming_the_key(tmp_path, change, message):
    result = snakemake(tmp_path, "-n", config={**TINY, **change})
    assert result.returncode != 0
    assert message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_llm_judge_in_the_workflow(tmp_path, monkeypatch):
    from fake_openai import FakeOpenAI

    secret = "sk-workflow-SECRET-123"
    with FakeOpenAI() as server:
        config = {
            **TINY,
            "models": ["refuse", "guess"],  # no two of their responses coincide, so every item is one API call
            "levels": [64],
            "prompts": ["honest"],
            "judge": "fake-gpt",
            "compare_judges": [["rules", "fake-gpt"]],
            "judges": {"fake-gpt": {"kind": "llm", "model": "gpt-fake", "base_url": server.base_url, "api_key_env": "VB_TEST_KEY"}},
        }
        monkeypatch.delenv("VB_TEST_KEY", raising=False)
        refused = snakemake(tmp_path, config=config)
        assert refused.returncode != 0
        assert "set the environment variable VB_TEST_KEY" in refused.stderr
        assert not (tmp_path / "results").exists(), "no job started"

        monkeypatch.setenv("VB_TEST_KEY", secret)
        result = snakemake(tmp_path, config=config)
        assert result.returncode == 0, result.stderr[-3000:]
        asked = server.total
        n_items = sum(len(p.read_text().splitlines()) for p in (tmp_path / "results" / "responses").rglob("*.jsonl"))
        assert asked == n_items == 30
        agreement = json.loads((tmp_path / "results" / "judge_agreement" / "rules__vs__fake-gpt.json").read_text())
        assert agreement["n_shared"] == 30 and agreement["judgement"]["kappa"] is not None
        judgment = json.loads(next((tmp_path / "results" / "judgments" / "fake-gpt").rglob("*.jsonl")).read_text().splitlines()[0])
        assert judgment["judge_model"] == "gpt-fake-snapshot" and judgment["judge_version"].startswith("virtuebench-judge/1@")

        # Judging again from scratch (outputs removed) asks the API nothing: the cache answers.
        shutil.rmtree(tmp_path / "results" / "judgments" / "fake-gpt")
        again = snakemake(tmp_path, config=config)
        assert again.returncode == 0, again.stderr[-3000:]
        assert server.total == asked
        texts = [p.read_text(errors="replace") for folder in ("results", "logs") for p in (tmp_path / folder).rglob("*") if p.is_file()]
        assert all(secret not in text for text in texts + [result.stdout, result.stderr, again.stderr])


def test_cvrr_benchmark_in_the_workflow(tmp_path, monkeypatch):
    from conftest import make_cvrr_release, write_release
    from fake_openai import FakeOpenAI

    from virtuebench.cvrr import DIMENSIONS

    release = make_cvrr_release(tmp_path / "CVRR-ES")
    published = write_release(tmp_path / "published", model="PaperModel")
    monkeypatch.setenv("VB_TEST_KEY", "sk-cvrr-test")
    with FakeOpenAI() as server:
        config = {
            "benchmark": "cvrr",
            "source": {"name": "cvrr", "settings": {"root": str(release), "level": 8}},
            "levels": [8],
            "models": ["refuse", "guess"],
            "prompts": ["standard", "dscp"],
            "judge": "cvrr-fake",
            "judges": {
                "cvrr-fake": {
                    "kind": "llm",
                    "model": "gpt-3.5-turbo-0125",
                    "base_url": server.base_url,
                    "api_key_env": "VB_TEST_KEY",
                    "prompt": "cvrr",
                    "max_tokens": 256,
                }
            },
            "cvrr": {"published_dir": str(published)},
            "report": {"prompt": "standard"},
        }
        workdir = tmp_path / "run"
        workdir.mkdir()
        result = snakemake(workdir, config=config)
        assert result.returncode == 0, result.stderr[-3000:]
        responses = [
            json.loads(line) for path in (workdir / "results" / "responses").rglob("*.jsonl") for line in path.read_text().splitlines()
        ]
        assert len(responses) == 4 * 2 * 2  # every question, the 5.2 s clip's too (8 frames over the whole clip)
        # At most one request per judged item; fewer where the cache already held the same
        # (question, truth, response) from a job that finished first.
        assert len({(r["instance_id"], r["response"]) for r in responses}) <= server.total <= len(responses)
    excluded = (workdir / "results" / "instances_excluded.csv").read_text()
    assert "404.mp4" in excluded and "too short" not in excluded
    short = json.loads(
        next(
            p for p in (workdir / "results" / "frames").glob("*/manifest.json") if "7.mp4" in json.loads(p.read_text())["video"]
        ).read_text()
    )
    assert short["sampling"] == "clip" and len(short["levels"]["8"]["files"]) == 8 and short["duration_s"] < 8
    rows = list(csv.DictReader((workdir / "results" / "cvrr" / "table2.csv").open()))
    by_row = {(r["setting"], r["model"]): r for r in rows}
    assert by_row[("standard_prompting", "PaperModel")]["average"] == "50.00"
    # The fake judge says correct when the first sentences match: refuse never matches "No." or "A rope.".
    assert by_row[("standard_prompting", "refuse")]["partial_actions"] == "0.00"
    assert by_row[("dscp_prompting", "guess")]["average"] == "-", "only 1 of 11 dimensions was run"
    assert set(rows[0]) == {"setting", "model", *DIMENSIONS, "average"}
    assert "0 empty predictions skipped" in (workdir / "results" / "cvrr" / "table2.tex").read_text()
    gains = list(csv.DictReader((workdir / "results" / "cvrr" / "fig4_dscp_gains.csv").open()))
    fig1 = list(csv.DictReader((workdir / "results" / "cvrr" / "fig1.csv").open()))
    assert [row["model"] for row in fig1] == ["PaperModel"] and (workdir / "results" / "cvrr" / "fig1.png").stat().st_size > 0
    assert gains == []  # no model has all 11 dimensions under both settings here (the published one: standard only)
    table3 = (workdir / "results" / "cvrr" / "table3.tex").read_text()
    assert "DSCP (Both stages)" in table3 and "refuse" in table3
    responses = [json.loads(line) for line in (workdir / "results" / "responses" / "guess" / "dscp" / "8.jsonl").read_text().splitlines()]
    assert all(r["context"] for r in responses), "DSCP's first step is recorded"


def test_dry_run_with_the_papers_25_models_schedules_exactly_what_the_registry_allows(tmp_path):
    registry = yaml.safe_load((REPO / "config" / "models.yaml").read_text())
    config = {
        **TINY,
        "levels": [64, 128, 256, 512, 1024],
        "models": list(registry),
        "source": {"name": "synthetic", "settings": {"seed": 1, "n_videos": 2, "width": 64, "height": 36}},
    }
    built = snakemake(tmp_path, "results/instances.parquet", config=config)
    assert built.returncode == 0, built.stderr[-3000:]
    dry = snakemake(tmp_path, "-n", config=config)
    assert dry.returncode == 0, dry.stderr[-3000:]
    jobs = re.findall(r"Asking (\S+) with prompt (\w+) at (\d+) frames", dry.stdout + dry.stderr)
    scheduled = {(m, p, int(level)) for m, p, level in jobs}
    expected = {
        (m, p, level)
        for m, entry in registry.items()
        for p in TINY["prompts"]
        for level in config["levels"]
        if level <= entry.get("max_level", 10**9)
    }
    assert len(jobs) == len(scheduled) and scheduled == expected
    assert len(scheduled) == 2 * (
        2 * 5
        + sum(
            len([lv for lv in config["levels"] if lv <= e.get("max_level", 10**9)])
            for n, e in registry.items()
            if n not in ("refuse", "guess")
        )
    )
