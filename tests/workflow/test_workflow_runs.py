"""Snakemake end to end on tiny configs, each test a run of its own (kept apart from tests/workflow/test_workflow.py's
shared demo run so that the test workers can take them in parallel): broken videos, the LLM judge against a
local fake server, CVRR-ES, and a dry run with the paper's 25 models."""

from __future__ import annotations

import csv
import json
import re
import shutil
import zipfile

import pytest
import yaml
from helpers.data import REPO
from helpers.workflow import TINY, snakemake
from helpers.workflow import scheduled as scheduled_jobs

pytestmark = pytest.mark.workflow


#: The smallest run that still checks what the broken-video test checks: one model, one prompt, one level.
SMALL = {**TINY, "models": ["refuse"], "prompts": ["honest"], "levels": [64]}


def test_broken_video_is_recorded_counted_and_named(tmp_path):
    first = snakemake(tmp_path, "results/instances.parquet", config=SMALL)
    assert first.returncode == 0, first.stderr[-3000:]
    broken = tmp_path / "results" / "videos" / "syn01.mp4"
    broken.write_bytes(b"\x00" * 1000)  # in place: the checkpoint's output folder stays as it was
    result = snakemake(tmp_path, "--keep-going", config=SMALL)
    assert result.returncode == 0, result.stderr[-3000:]
    manifest = json.loads((tmp_path / "results" / "frames" / "syn01" / "64" / "manifest.json").read_text())  # per level
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
    strict = {**SMALL, "frames": {"on_broken_video": "fail"}}
    result = snakemake(tmp_path, "--keep-going", config=strict)
    assert result.returncode != 0
    assert "syn01.mp4" in result.stdout + result.stderr
    assert (tmp_path / "results" / "frames" / "syn00" / "64" / "manifest.json").exists()
    assert (tmp_path / "results" / "frames" / "syn02" / "64" / "manifest.json").exists()
    assert not (tmp_path / "results" / "frames" / "syn01" / "64").exists()


def test_a_rules_judge_under_another_name_reports_under_that_name(tmp_path):
    config = {**SMALL, "judge": "strict", "judges": {"strict": {"kind": "rules", "truncated": "judge"}}}
    result = snakemake(tmp_path, "results/table1.tex", config=config)
    assert result.returncode == 0, result.stderr[-3000:]
    records = [json.loads(line) for line in (tmp_path / "results/judgments/strict/refuse/honest/64.jsonl").read_text().splitlines()]
    assert len(records) == 15 and {record["judge"] for record in records} == {"strict"}
    table = (tmp_path / "results" / "table1.tex").read_text()
    assert r"judge \texttt{strict}; 15 judged items" in table
    # the caption states the judge's open decisions at the values in effect (docs/choices.md, "The judge")
    assert "judge options: reasoning = with-reasoning (default); truncated = judge." in table
    (row,) = [line for line in table.splitlines() if line.startswith("refuse & ")]
    assert re.fullmatch(r"refuse & \d+\.\d\d & \d+\.\d\d / \d+\.\d\d \\\\", row), row


def test_llm_judge_in_the_workflow(tmp_path, monkeypatch):
    from helpers.fake_openai import FakeOpenAI

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


def test_hybrid_judge_sends_only_what_the_rules_are_unsure_of(tmp_path, monkeypatch):
    from helpers.fake_openai import FakeOpenAI

    from virtuebench.judge.rules import RulesJudge

    monkeypatch.setenv("VB_TEST_KEY", "sk-hybrid-test")
    with FakeOpenAI() as server:
        config = {
            **TINY,
            "models": ["refuse", "guess"],  # no two of their responses coincide, so every unsure item is one API call
            "levels": [64],
            "prompts": ["honest"],
            "judge": "both",
            "judges": {
                "fake-gpt": {"kind": "llm", "model": "gpt-fake", "base_url": server.base_url, "api_key_env": "VB_TEST_KEY"},
                "both": {"kind": "hybrid", "llm": "fake-gpt"},
            },
        }
        result = snakemake(tmp_path, config=config)
        assert result.returncode == 0, result.stderr[-3000:]
        records = [
            json.loads(line) for p in (tmp_path / "results" / "judgments" / "both").rglob("*.jsonl") for line in p.read_text().splitlines()
        ]
        # Independently of the hybrid: the rules judge's own confidence on the same items.
        rules = RulesJudge()
        unsure = [r for r in records if not rules.judge(r["question"], r["answer"], r["response"]).confident]
        assert len(records) == 30 and 0 < len(unsure) < len(records), "the demo has items of both kinds"
        assert server.total == len(unsure), "one request per unconfident item, none for the others"
        assert sorted(r["instance_id"] for r in records if r["decided_by"] == "llm") == sorted(r["instance_id"] for r in unsure)
        assert all(r["valid"] and r["confident"] is (r["decided_by"] == "rules") for r in records)
        logs = "".join(p.read_text() for p in (tmp_path / "logs").rglob("*.log"))
        decided = [tuple(map(int, m)) for m in re.findall(r"decided by the rules (\d+) \(requests saved\), by the LLM judge (\d+)", logs)]
        assert len(decided) == 2 and tuple(map(sum, zip(*decided))) == (len(records) - len(unsure), len(unsure)), decided

    # Without a key and `if_no_key: rules`: the unsure items are marked invalid, listed and counted, not guessed.
    monkeypatch.delenv("VB_TEST_KEY")
    keyless = {**config, "judges": {**config["judges"], "both": {"kind": "hybrid", "llm": "fake-gpt", "if_no_key": "rules"}}}
    workdir = tmp_path / "keyless"
    workdir.mkdir()
    result = snakemake(workdir, config=keyless)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "VB_TEST_KEY is not set: judge both decides only where the rules are confident" in result.stderr
    records = [
        json.loads(line) for p in (workdir / "results" / "judgments" / "both").rglob("*.jsonl") for line in p.read_text().splitlines()
    ]
    invalid = [r for r in records if not r["valid"]]
    assert sorted(r["instance_id"] for r in invalid) == sorted(r["instance_id"] for r in unsure)
    assert all(r["decided_by"] == "none" and "no LLM judge" in r["reason"] for r in invalid)
    listed = list(csv.DictReader((workdir / "results" / "invalid_items.csv").open()))
    assert sorted(row["instance_id"] for row in listed) == sorted(r["instance_id"] for r in invalid)
    assert f", {len(invalid)} without a valid verdict" in (workdir / "results" / "table2.tex").read_text()


def test_cvrr_benchmark_in_the_workflow(tmp_path, monkeypatch):
    from helpers.data import make_cvrr_release, write_release
    from helpers.fake_openai import FakeOpenAI

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
    # The 9 dimensions this fixture lacks, the missing video and the bad row are counted at the end of the run, each as
    # what it is, naming the file.
    assert (
        "virtuebench WARNING: 9 dimensions and 2 items of the source were left out of the instances table (9 dimensions: "
        "annotation file not found; 1 item: video" in result.stderr
    )
    assert "results/instances_excluded.csv" in result.stderr
    short = json.loads(
        next(
            p for p in (workdir / "results" / "frames").glob("*/*/manifest.json") if "7.mp4" in json.loads(p.read_text())["video"]
        ).read_text()
    )
    assert short["sampling"] == "clip" and len(short["levels"]["8"]["files"]) == 8 and short["duration_s"] < 8
    rows = list(csv.DictReader((workdir / "results" / "table2.csv").open()))
    by_row = {(r["setting"], r["model"]): r for r in rows}
    assert by_row[("standard_prompting", "PaperModel")]["average"] == "50.00"
    # The fake judge says correct when the first sentences match: refuse never matches "No." or "A rope.".
    assert by_row[("standard_prompting", "refuse")]["partial_actions"] == "0.00"
    assert by_row[("dscp_prompting", "guess")]["average"] == "-", "only 1 of 11 dimensions was run"
    assert set(rows[0]) == {"setting", "model", *DIMENSIONS, "average"}
    assert "0 empty predictions skipped" in (workdir / "results" / "table2.tex").read_text()
    gains = list(csv.DictReader((workdir / "results" / "fig4_dscp_gains.csv").open()))
    fig1 = list(csv.DictReader((workdir / "results" / "fig1.csv").open()))
    assert [row["model"] for row in fig1] == ["PaperModel"] and (workdir / "results" / "fig1.png").stat().st_size > 0
    assert gains == []  # no model has all 11 dimensions under both settings here (the published one: standard only)
    table3 = (workdir / "results" / "table3.tex").read_text()
    assert "DSCP (Both stages)" in table3 and "refuse" in table3
    responses = [json.loads(line) for line in (workdir / "results" / "responses" / "guess" / "dscp" / "8.jsonl").read_text().splitlines()]
    assert all(r["context"] for r in responses), "DSCP's first step is recorded"
    # Snakemake's report holds CVRR-ES's tables and figures (their captions from report/) and the results browser
    report = snakemake(workdir, "--report", "results/report.zip", config=config)
    assert report.returncode == 0, report.stderr[-3000:]
    with zipfile.ZipFile(workdir / "results" / "report.zip") as archive:
        names = {name.rsplit("/", 1)[-1] for name in archive.namelist()}
        page = archive.read("report/report.html").decode()
    assert {
        "table2.tex",
        "table3.tex",
        "table2.html",
        "table3.html",
        "fig1.png",
        "fig4_dscp_gains.png",
        "index.html",
        "report.html",
    } <= names
    assert "CVRR-ES" in page and "Dual-Step Contextual Prompting over standard prompting" in page


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
    assert scheduled_jobs(dry)["make_paper_vs_run"] == 1  # the 25 models are the paper's rows: paper_vs_run is a default target
    assert len(scheduled) == 2 * (
        2 * 5
        + sum(
            len([lv for lv in config["levels"] if lv <= e.get("max_level", 10**9)])
            for n, e in registry.items()
            if n not in ("refuse", "guess")
        )
    )


def test_paper_vs_run_is_planned_for_the_papers_configuration_with_each_model_as_its_row(tmp_path):
    """`snakemake -n --configfile config/paper.yaml results/paper/paper_vs_run.csv` plans it after the curation chain
    and the scores, every one of the 25 models shown beside its own row of the paper's tables."""
    config = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())
    dry = snakemake(tmp_path, "-n", "-p", "results/paper/paper_vs_run.csv", config=config)
    jobs = scheduled_jobs(dry)
    assert jobs["make_paper_vs_run"] == 1 and jobs["compute_scores"] == 1 and jobs["make_instances"] == 1
    command = next(line for line in dry.stdout.splitlines() if "virtuebench.report paper-vs-run" in line)
    assert sorted(re.findall(r"--paper-name (\S+)=(\S+)", command)) == sorted((m, m) for m in config["models"])
    assert "--prompt honest --judge gpt-4o" in command


def test_starting_a_curated_run_without_hf_token_stops_before_any_job(tmp_path, monkeypatch):
    """curation: {seed: 0} leaves the sources to the schema's default six; starting (not a dry run, which needs no
    keys) stops before the first job, naming HF_TOKEN and the gated sources."""
    for name in ("HF_TOKEN", "GEMINI_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    config = {**TINY, "source": {"name": "virtuebench"}, "curation": {"seed": 0}, "models": ["refuse"]}
    result = snakemake(tmp_path, config=config)
    assert result.returncode != 0
    assert "HF_TOKEN" in result.stderr and "longvideobench (longvideobench/LongVideoBench) is gated" in result.stderr
    assert not (tmp_path / "results").exists()  # no job ran
    assert snakemake(tmp_path, "-n", config=config).returncode == 0  # a dry run needs no keys


def test_a_sampled_model_shows_the_mean_and_spread_of_its_runs_in_the_tables(tmp_path, monkeypatch):
    """`samples: 3` on a sampled model (issue 38): its response and judgment files hold three records per item, and
    Tables 1 and 2 show each cell as the mean over the runs, then "(SD x)", recomputed here from the judgments; the
    caption says the SD is the run-to-run spread; a model run once looks as before. The same key on a backend that decodes deterministically is refused."""
    import os
    import statistics

    # the jobs import the test backend as helpers.vb_test_backends:SampledBackend (package.module:Class)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(REPO / "tests"), os.environ.get("PYTHONPATH", "")]))
    registry = {"sampled": {"backend": "helpers.vb_test_backends:SampledBackend", "samples": 3, "settings": {"seed": 5}}}
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump(registry))
    config = {
        **SMALL,
        "models": ["guess", "sampled"],
        "model_registry": [str(REPO / "config" / "models.yaml"), str(tmp_path / "mine.yaml")],
    }
    result = snakemake(tmp_path, "results/table1.tex", "results/table2.tex", config=config)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = (tmp_path / "results/judgments/rules/sampled/honest/64.jsonl").read_text().splitlines()
    judgments = [json.loads(line) for line in lines]
    assert len(judgments) == 45 and sorted({j["sample"] for j in judgments}) == [0, 1, 2]
    assert '"sample"' not in (tmp_path / "results/judgments/rules/guess/honest/64.jsonl").read_text()

    def cell(rows):
        """The mean over the runs of the accuracy (percent) of `rows`, then their SD (ddof 1), as the tables print it."""
        runs = [[j for j in rows if j["sample"] == k] for k in range(3)]
        per_run = [100 * sum(j["valid"] and j["judgement"] == 1 for j in run) / len(run) for run in runs]
        return rf"{statistics.mean(per_run):.2f} {{\scriptsize(SD {statistics.stdev(per_run):.2f})}}"

    unanswerable = [j for j in judgments if j["is_unanswerable"]]
    answerable = [j for j in judgments if not j["is_unanswerable"]]
    table2 = (tmp_path / "results" / "table2.tex").read_text()
    (row,) = [line for line in table2.splitlines() if line.startswith("sampled & ")]
    assert row == f"sampled & {cell(judgments)} & {cell(answerable)} & {cell(unanswerable)} \\\\", row
    assert "sampled the mean over 3 sampled runs: (SD x) is the run-to-run spread (SD over 3 runs), not the uncertainty" in table2
    (guess,) = [line for line in table2.splitlines() if line.startswith("guess & ")]
    assert "SD" not in guess
    table1 = (tmp_path / "results" / "table1.tex").read_text()
    (row,) = [line for line in table1.splitlines() if line.startswith("sampled & ")]
    perception = [j for j in judgments if j["category"] == "perception"]
    reasoning = [j for j in judgments if j["category"] == "reasoning"]
    assert row == f"sampled & {cell(judgments)} & {cell(perception)} / {cell(reasoning)} \\\\", row
    scores = list(csv.DictReader((tmp_path / "results" / "scores.csv").open()))
    overall = next(r for r in scores if (r["model"], r["level"], r["subset"]) == ("sampled", "64", "overall"))
    assert overall["samples"] == "3" and int(overall["n"]) == 15 and overall["accuracy_sd"] and overall["ci_method"]
    assert int(overall["n_correct"]) == sum(j["valid"] and j["judgement"] == 1 for j in judgments)

    (tmp_path / "mine.yaml").write_text(yaml.safe_dump({"sampled": {"backend": "guess", "samples": 3}}))
    refused = snakemake(tmp_path, "-n", config=config)
    assert refused.returncode != 0
    assert "sampled: samples: 3, but backend guess decodes deterministically" in refused.stdout + refused.stderr
