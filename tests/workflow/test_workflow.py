"""Snakemake end to end on a tiny config, one shared run: outputs, the analytic check on `refuse`, frame
codes, traceability of every score, resumability of the whole run, lint and config errors. The tests that
need a run of their own (broken videos, the LLM judge, CVRR-ES, the paper's models) are in
tests/workflow/test_workflow_runs.py."""

from __future__ import annotations

import csv
import json
import os
import shutil
from collections import Counter
from pathlib import Path

import pytest
from helpers.workflow import TINY, executed, scheduled, snakemake
from PIL import Image

from virtuebench.check import load_plan
from virtuebench.estimate import estimate, render
from virtuebench.instances import read_instances
from virtuebench.metrics import compute_scores
from virtuebench.records import Judgment, load_records
from virtuebench.sources.synthetic import read_second_code

pytestmark = pytest.mark.workflow

OUTPUTS = ["table1.tex", "table2.tex", "fig4.png", "fig6.png", "scores.csv", "comparisons.csv", "table2_trust.tex", "fig_levels.png"]
OUTPUTS += ["fig3_composition.png", "supplement/fig1_sources.png", "browser/index.html", "report/browser/index.html"]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("workflow")
    result = snakemake(workdir)
    assert result.returncode == 0, result.stderr[-4000:]
    (workdir / "run.stderr").write_text(result.stderr)  # what the run said (test_a_real_run_says_what_it_will_ask)
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
    # All right (100) or all wrong (0) is where a bootstrap interval collapses: none does with 10 items or more.
    edges = [r for r in rows if int(r["n"]) >= 10 and r["ci_low"] and float(r["accuracy"]) in (0.0, 100.0)]
    assert edges and all(float(r["ci_low"]) < float(r["ci_high"]) for r in rows if int(r["n"]) >= 10 and r["ci_low"])
    assert {r["ci_method"] for r in edges} == {"clopper-pearson-cr2"}


def test_every_extracted_frame_shows_its_second(run):
    checked = 0
    for manifest_path in (run / "results" / "frames").glob("*/*/manifest.json"):  # one per level folder
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
    from helpers.browser import click_through

    site = run / "results" / "browser"
    assert (site / "index.html").is_file() and len(list((site / "items").glob("*.html"))) == 15
    shots = Path(os.environ.get("VB_SCREENSHOTS", tmp_path / "screenshots"))
    seen = click_through(site, shots)
    assert seen["title"].startswith("Item ") and "Ground truth" in seen["text"] and "oracle" in seen["text"]
    assert seen["thumbs"] == 64 and "thumbs/" in seen["image"] and seen["focused"] >= 1
    layout = seen["layout"]  # at 1,400 px nothing reaches past the window or scrolls sideways
    assert layout["page_scroll"] <= layout["page_client"] and layout["beyond"] == [] and layout["scrollers"] == [], layout
    assert "Trust score [95% interval]" in layout["headers"] and "Why the trust score differs" in layout["legend"]
    assert "baseline (no model)" in layout["text"] and "anchor row" in layout["text"]  # the registry's words
    compared = (run / "results" / "comparisons.csv").read_text().splitlines()[1:]
    assert f"Paired comparisons: {len(compared)} (comparisons.csv)" in layout["text"] and compared  # behind their summary
    # rows in Table 2's order (config.models: refuse, guess, oracle), not alphabetical
    index = (site / "index.html").read_text()
    found = [index.index(f'">{model} <span class="prompt">') for model in TINY["models"]]
    assert found == sorted(found)
    print(f"\ndemo site screenshots: {shots}")


def open_report(report_zip: Path, folder: Path, shots: Path) -> dict[str, object]:
    """Snakemake's report (the zip `snakemake --report` writes) unpacked and opened in chromium: the results of each
    category, and the results browser the report shows in its frame."""
    import zipfile

    from helpers.browser import click_settled
    from helpers.browser import driver as _driver
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    with zipfile.ZipFile(report_zip) as archive:
        archive.extractall(folder)
    browser = _driver()
    wait = WebDriverWait(browser, 20)
    try:
        browser.get((folder / report_zip.stem / "report.html").resolve().as_uri())
        wait.until(lambda b: b.find_elements(By.XPATH, "//span[normalize-space(text())='Per-item results']"))
        shots.mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(shots / "report.png"))
        seen: dict[str, object] = {"description": browser.find_element(By.TAG_NAME, "body").text}
        for category in ("Tables", "Figures", "Numbers", "Per-item results"):  # the menu, then each category's files
            click_settled(wait, f"//span[normalize-space(text())='{category}']")
            cells = wait.until(lambda b: b.find_elements(By.XPATH, "//tr/td[starts-with(normalize-space(text()), 'results/')]"))
            seen[category] = sorted(cell.text for cell in cells)
            if category != "Per-item results":
                click_settled(wait, "//*[normalize-space(text())='Results']")  # the breadcrumb
                wait.until(lambda b: b.find_elements(By.XPATH, "//span[normalize-space(text())='Figures']"))
        eye = "/../descendant::a[@iconname='eye']"
        click_settled(wait, "//td[normalize-space(text())='results/report/browser/index.html']" + eye)
        frame = wait.until(lambda b: b.find_elements(By.TAG_NAME, "iframe"))[0]
        seen["frame"] = frame.get_attribute("src")
        browser.switch_to.frame(frame)
        seen["site"] = wait.until(lambda b: b.find_element(By.TAG_NAME, "h1").text)
        seen["rows"] = [cell.text.split()[0] for cell in browser.find_elements(By.CSS_SELECTOR, "tr th.arm")[1:]]
        # Table 2's page, as the report shows it: in its frame, a table (the report app draws the frame when asked)
        browser.switch_to.default_content()
        click_settled(wait, "//*[normalize-space(text())='Results']")
        click_settled(wait, "//span[normalize-space(text())='Tables']")
        click_settled(wait, "//td[normalize-space(text())='results/table2.html']" + eye)
        frame = wait.until(lambda b: [f for f in b.find_elements(By.TAG_NAME, "iframe") if f.get_attribute("src").endswith("table2.html")])[
            0
        ]
        browser.switch_to.frame(frame)
        table = wait.until(lambda b: b.find_element(By.CSS_SELECTOR, "table#tab\\:refusal"))
        seen["table2_shown"] = table.is_displayed() and table.size["height"] > 0
        seen["table2"] = {
            row.find_element(By.TAG_NAME, "th").text: [cell.text for cell in row.find_elements(By.TAG_NAME, "td")]
            for row in table.find_elements(By.CSS_SELECTOR, "tbody tr")
        }
        browser.switch_to.default_content()
        browser.save_screenshot(str(shots / "report_table2.png"))
        return seen
    finally:
        browser.quit()


def test_snakemakes_report_shows_the_tables_figures_and_the_browser_and_reruns_nothing(run, tmp_path):
    report_zip = run / "results" / "report.zip"
    result = snakemake(run, "--report", str(report_zip))
    assert result.returncode == 0 and "Report created" in result.stderr, result.stderr[-3000:]
    shots = Path(os.environ.get("VB_SCREENSHOTS", tmp_path / "screenshots"))
    seen = open_report(report_zip, tmp_path / "unpacked", shots)
    assert "arXiv 2603.07071" in seen["description"] and "arXiv 2405.03690" in seen["description"]
    assert seen["Tables"] == [f"results/{table}.{kind}" for table in ("table1", "table2", "table2_trust") for kind in ("html", "tex")]
    assert seen["Figures"] == [
        f"results/{name}.png" for name in ("fig3_composition", "fig4", "fig6", "fig_levels", "supplement/fig1_sources")
    ]
    assert seen["Numbers"] == ["results/comparisons.csv", "results/scores.csv"]
    assert seen["Per-item results"] == ["results/report/browser/index.html"]
    assert seen["frame"].endswith("/index.html") and seen["site"] == "VirtueBench results"
    assert seen["rows"] == [model for model in TINY["models"] for _ in TINY["prompts"]]
    assert (shots / "report.png").stat().st_size > 5000
    # Table 2 shown as a table: a row per model, the cells of table2.tex (every number with its interval where printed)
    latex = (run / "results" / "table2.tex").read_text().split("\\midrule\n", 1)[1].split("\\bottomrule")[0]
    cells = {name: values for name, *values in (line.removesuffix(r" \\").split(" & ") for line in latex.splitlines())}
    assert seen["table2_shown"] and seen["table2"] == cells and list(cells) == TINY["models"], (seen["table2"], cells)
    assert "Nothing to be done" in (lambda r: r.stdout + r.stderr)(snakemake(run, "-n"))  # the report ran no job


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


def test_paper_vs_run_of_the_demo_models_under_the_papers_names_asks_nothing_again(run, tmp_path):
    """The demo's synthetic models shown beside two rows of the paper (report.paper_names): only make_paper_vs_run
    runs, and each of its numbers is scores.csv's, beside the paper's, with the difference and the interval's flag.
    This proves the join, the flags and the arithmetic, not agreement: the models are synthetic."""
    from virtuebench.report.paper import paper_cells

    work = tmp_path / "run"
    shutil.copytree(run, work, symlinks=True)
    config = {**TINY, "report": {"paper_names": {"oracle": "Qwen3VL-32B", "guess": "LLaVA-Video-7B"}}}
    assert scheduled(snakemake(work, "-n", config=config)) == Counter({"make_paper_vs_run": 1, "all": 1})
    assert executed(snakemake(work, config=config)) == Counter({"make_paper_vs_run": 1, "all": 1})
    with (work / "results" / "scores.csv").open() as handle:
        scores = {(r["model"], r["level"], r["subset"]): r for r in csv.DictReader(handle) if r["prompt"] == "honest"}
    with (work / "results" / "paper_vs_run.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    shown = {(r["model"], r["paper_model"], r["level"]) for r in rows}
    # refuse is no row of the paper; LLaVA-Video-7B was not run at 256 frames in the paper
    assert shown == {("oracle", "Qwen3VL-32B", lv) for lv in ("64", "128", "256")} | {
        ("guess", "LLaVA-Video-7B", lv) for lv in ("64", "128")
    }
    cells = paper_cells()
    for row in rows:
        score = scores[(row["model"], row["level"], row["subset"])]
        table = 1 if row["subset"] in ("perception", "reasoning") else 2
        paper = cells[(table, row["paper_model"], int(row["level"]), row["subset"])]
        assert float(row["paper"]) == paper and abs(float(row["run"]) - float(score["accuracy"])) <= 0.005
        assert abs(float(row["difference"]) - (float(score["accuracy"]) - paper)) <= 0.005
        low, high = float(score["ci_low"]), float(score["ci_high"])
        assert (row["ci_low"], row["ci_high"]) == (f"{low:.2f}", f"{high:.2f}")
        assert row["outside"] == ("no" if low <= paper <= high else "yes")
    assert {r["run"] for r in rows if r["model"] == "oracle"} == {"100.00"}  # the oracle reads every frame right
    for name in ("paper_vs_run.tex", "paper_vs_run.html"):
        assert "Qwen3VL-32B" in (work / "results" / name).read_text()


def test_second_run_has_nothing_to_do(run):
    result = snakemake(run, "-n")
    assert result.returncode == 0
    assert "Nothing to be done" in result.stdout + result.stderr
    assert "what it will ask" not in result.stdout + result.stderr  # the cost summary is a real run's, never a dry run's


def test_a_real_run_says_what_it_will_ask_once(run):
    said = (run / "run.stderr").read_text()
    assert said.count("virtuebench: before the run, what it will ask") == 1
    # the demo's first run: its instances table is made by the run (a checkpoint), so no item is counted before it
    assert "Items: no instances table yet (results/instances.parquet)" in said


def test_the_plan_of_a_finished_run_asks_nothing_until_an_answer_is_gone(run, tmp_path, monkeypatch):
    # a copy: the finished run, its answer store and its configuration
    for name in ("results", ".virtuebench", "config.yaml"):
        (shutil.copytree if (run / name).is_dir() else shutil.copy2)(run / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    plan = load_plan(["config.yaml"])
    finished = estimate(plan)
    assert finished.rows and all(row.items == row.requests == 0 for row in finished.rows)
    assert not [entry for entry in finished.frames if entry.frames_due] and sum(e.bytes_done for e in finished.frames) > 0
    assert finished.frame_bytes_basis.startswith("measured")
    assert "Nothing to ask: every run is answered." in render(finished, plan)
    # a responses file removed: the answer store still holds its answers, so nothing is asked (as the job would find)
    (tmp_path / "results/responses/oracle/honest/64.jsonl").unlink()
    assert all(row.items == 0 for row in estimate(plan).rows)
    # and with the store's answers gone too, its items are due, and only those
    shutil.rmtree(tmp_path / ".virtuebench/store/answers")
    due = [(row.model, row.level, row.items, row.requests) for row in estimate(plan).rows if row.items]
    at_64 = len([inst for inst in read_instances(tmp_path / "results/instances.parquet") if 64 in inst.answers])
    assert due == [("oracle", 64, at_64, at_64)]
    # a level's frames folder removed: Snakemake re-extracts it and reruns that level's inference jobs (inputs by date);
    # the store cannot be asked before the frames are there, so every item of the level is due, and said to be a bound
    video = next(inst.video_id for inst in read_instances(tmp_path / "results/instances.parquet") if 128 in inst.answers)
    shutil.rmtree(tmp_path / f"results/frames/{video}/128")
    estimated = estimate(plan)
    at_128 = len([inst for inst in read_instances(tmp_path / "results/instances.parquet") if 128 in inst.answers])
    per_level = {row.model: row.items for row in estimated.rows if row.level == 128}
    assert per_level == {model: at_128 * len(TINY["prompts"]) for model in TINY["models"]}
    assert sum(row.unchecked for row in estimated.rows) == at_128 * len(TINY["prompts"]) * len(TINY["models"])
    assert [(f.level, f.videos_due) for f in estimated.frames if f.videos_due] == [(128, 1)]


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
        ({"models": ["Qwen2.5VL-7b"]}, "config.models[0]: 'Qwen2.5VL-7b' is not in the model registry"),
        ({"models": ["Qwen2.5VL-7b"]}, "; did you mean 'Qwen2.5VL-7B'? allowed values: "),
    ],
)
def test_bad_config_stops_the_run_naming_the_key(tmp_path, change, message):
    result = snakemake(tmp_path, "-n", config={**TINY, **change})
    assert result.returncode != 0
    assert message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_a_dry_run_warns_of_what_a_real_run_would_stop_on_or_ignore(tmp_path, monkeypatch):
    monkeypatch.delenv("VB_TEST_KEY", raising=False)
    # Level 32 is not the paper's, but the source builds its items there (an empty level would stop the run).
    source = {**TINY["source"], "settings": {**TINY["source"]["settings"], "levels": [32, 64, 128, 256]}}
    config = {
        **TINY,
        "source": source,
        "levels": [32, 64],
        "judge": "gpt",
        "judges": {"gpt": {"kind": "llm", "model": "m", "api_key_env": "VB_TEST_KEY"}},
        "report": {"trust": {"wrong_answer": -2.0}},
    }
    dry = snakemake(tmp_path, "-n", config=config)
    assert dry.returncode == 0, dry.stderr[-3000:]
    warned = [line for line in dry.stderr.splitlines() if line.startswith("virtuebench WARNING: ")]
    assert warned == [
        "virtuebench WARNING: config.levels: [32] are not the paper's levels [64, 128, 256, 512, 1024]: accepted, but the "
        "tables then differ from the paper's",
        "virtuebench WARNING: config.report.trust.wrong_answer: does nothing under scheme kalai (the default), which reads "
        "only confidence_target; wrong_answer is scheme refusal-credit's",
        "virtuebench WARNING: config.judges.gpt: the judge needs an API key: set the environment variable VB_TEST_KEY (or set "
        "config.judge: rules, or config.judges.gpt.if_no_key: rules); a real run stops here, before any job",
    ]
    real = snakemake(tmp_path, config=config)
    assert real.returncode != 0
    assert (
        "virtuebench: invalid configuration:\n  config.judges.gpt: the judge needs an API key: set the environment variable VB_TEST_KEY"
        in real.stderr
    )
    assert "WARNING: config.judges.gpt" not in real.stderr and "WARNING: config.levels" in real.stderr
    assert not (tmp_path / "results").exists(), "no job started"
