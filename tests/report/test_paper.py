"""The paper's Tables 1 and 2 as data (virtuebench.report.paper): the transcription held to the counts each row
implies, its known anomalies exactly, and each paper number beside a run's (paper_vs_run)."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest
import yaml

from virtuebench.metrics import Score, write_scores
from virtuebench.provenance import stamp
from virtuebench.report import paper
from virtuebench.report.__main__ import main as report_main

REPO = Path(__file__).resolve().parents[2]

#: What the paper's Tables 1 and 2 imply per level (issue 50): items, unanswerable items, and perception items.
IMPLIED = {64: (1328, 510, 751), 128: (1191, 376, 669), 256: (1180, 262, 663), 512: (915, 148, 468), 1024: (587, 87, 298)}


def test_the_transcription_has_the_papers_25_models_under_the_registrys_names_each_at_the_levels_it_ran():
    config = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())
    registry = yaml.safe_load((REPO / "config" / "models.yaml").read_text())
    assert len(paper.paper_models()) == 25 and sorted(paper.paper_models()) == sorted(config["models"])
    cells = paper.paper_cells()
    for model in paper.paper_models():
        ran = [level for level in paper.PAPER_LEVELS if level <= registry[model]["max_level"]]
        for table, subsets in paper.SUBSETS.items():
            held = [level for level in paper.PAPER_LEVELS if all((table, model, level, s) in cells for s in subsets)]
            assert held == ran, (table, model)  # a "-" exactly where the model's frame limit stops it
            # Table 1's overall is Table 2's: one number printed twice.
            for level in ran:
                assert cells[(1, model, level, "overall")] == cells[(2, model, level, "overall")]
    assert len(cells) == 2 * 3 * sum(len([lv for lv in paper.PAPER_LEVELS if lv <= registry[m]["max_level"]]) for m in paper.paper_models())


def test_count_of_is_the_k_of_k_over_n_that_prints_as_the_percentage():
    assert paper.count_of(27.70, 751) == 208 and paper.count_of(18.20, 577) == 105  # LLaVA-Video-7B at 64 frames
    assert paper.count_of(0.80, 510) is None  # 4/510 = 0.78
    assert paper.count_of(0.00, 510) == 0 and paper.count_of(50.0, 0) is None
    row = paper.PaperRow(1, "LLaVA-Video-7B", 64, 23.57, 27.70, 18.20)
    assert paper.row_fits(row, 751, 577)  # 208 + 105 = 313 = 23.57% of 1,328
    assert not paper.row_fits(row, 767, 561)  # section 3.3's split: 27.70% of 767 is no whole number
    assert not paper.row_fits(paper.PaperRow(1, "m", 64, 23.67, 27.70, 18.20), 751, 577)  # parts right, sum wrong


def test_the_counts_the_tables_imply_are_the_issues_per_level_counts_with_751_perception_and_577_reasoning_at_64():
    counts = paper.implied_counts()
    assert {level: (c.n, c.unanswerable, c.perception) for level, c in counts.items()} == IMPLIED
    assert counts[64].denominators(1) == (751, 577) and counts[64].denominators(2) == (818, 510)


def _fits_no_split(row: paper.PaperRow, n: int) -> bool:
    return not any(paper.row_fits(row, *((a, n - a) if row.table == 1 else (n - a, a))) for a in range(1, n))


def test_the_rows_that_fit_no_implied_count_are_exactly_the_known_anomalies_each_fitting_what_it_says():
    cells, counts, anomalies = paper.paper_cells(), paper.implied_counts(), paper.paper_anomalies()
    assert paper.misfits(cells, counts) == list(anomalies)  # the same rows, in the tables' order
    rows = {row.key: row for row in paper.paper_rows(cells)}
    for key, anomaly in anomalies.items():
        row = rows[key]
        if anomaly.fits is None:
            assert _fits_no_split(row, counts[row.level].n), key
        else:
            n, split = anomaly.fits
            assert paper.row_fits(row, *((split, n - split) if row.table == 1 else (n - split, split))), key
    # The issue's two examples: Gemini's 64-frame row implies 460 unanswerable; GPT-4o's fit n = 1,326.
    assert anomalies[(2, "Gemini-2.5-Flash", 64)].fits == (1328, 460)
    assert anomalies[(2, "GPT-4o", 64)].fits == (1326, 510) and anomalies[(1, "GPT-4o", 64)].fits == (1326, 749)


@pytest.mark.parametrize(
    ("table", "column", "model", "typo"),
    [
        ("1", "128_perception", "Qwen3VL-8B", "39.64"),
        ("2", "1024_refusal", "Mimo-VL-7B-RL", "39.07"),
        ("2", "64_overall", "LLaVA-Video-7B", "23.75"),
    ],
)
def test_a_transcription_typo_makes_a_row_that_is_not_a_known_anomaly(tmp_path, table, column, model, typo):
    data = tmp_path / "data"
    shutil.copytree(paper.DATA, data)
    path = data / f"paper_table{table}.csv"
    lines = path.read_text().splitlines(keepends=True)
    header = next(line for line in lines if not line.startswith("#")).strip().split(",")
    for i, line in enumerate(lines):
        if line.startswith(f"{model},"):
            values = line.strip().split(",")
            values[header.index(column)] = typo
            lines[i] = ",".join(values) + "\n"
    path.write_text("".join(lines))
    found = paper.misfits(paper.paper_cells(data), paper.implied_counts(data))
    assert (int(table), model, int(column.split("_")[0])) in set(found) - set(paper.paper_anomalies())


# ---------------------------------------------------------------------------------------------
# The paper beside a run


def _score(model, level, subset, accuracy, low=None, high=None, prompt="honest", judge="rules"):
    return Score(model, prompt, str(level), subset, accuracy, 1, 10, 0, judge, ci_low=low, ci_high=high)


def test_paper_vs_run_joins_through_the_paper_names_and_flags_a_paper_value_outside_the_interval():
    # Qwen3VL-32B at 64 frames: overall 50.83, perception 53.00, reasoning 48.01, non-refusal 44.99, refusal 60.20.
    scores = [
        _score("oracle", 64, "overall", 60.0, 55.0, 65.0),  # 50.83 below the interval
        _score("oracle", 64, "perception", 52.0, 45.0, 58.0),  # 53.00 inside
        _score("oracle", 64, "refusal", 60.2),  # no interval: no flag
        _score("oracle", 64, "overall", 50.83, 50.0, 51.0, prompt="plain"),  # another prompt: not compared
        _score("oracle", 64, "overall", 50.83, 50.0, 51.0, judge="gpt-4o"),  # another judge
        _score("LLaVA-Video-7B", 64, "overall", 23.57, 20.0, 30.0),  # the paper's own name: no mapping needed
        _score("refuse", 64, "overall", 40.0, 35.0, 45.0),  # in no paper row
    ]
    rows = paper.paper_vs_run(scores, ["oracle", "LLaVA-Video-7B", "refuse"], [64, 256], "rules", {"oracle": "Qwen3VL-32B"})
    shown = {(r["model"], r["level"], r["subset"]): r for r in rows}
    assert {model for model, _, _ in shown} == {"oracle", "LLaVA-Video-7B"}
    # LLaVA-Video-7B did not run at 256 frames in the paper: no row; Qwen3VL-32B did, and the run has no number there.
    assert {level for model, level, _ in shown if model == "LLaVA-Video-7B"} == {64}
    assert len([key for key in shown if key[0] == "oracle"]) == 2 * 5
    overall = shown[("oracle", 64, "overall")]
    assert (overall["paper_model"], overall["tables"], overall["paper"], overall["run"]) == ("Qwen3VL-32B", "1 and 2", "50.83", "60.00")
    assert (overall["difference"], overall["ci_low"], overall["ci_high"], overall["outside"]) == ("9.17", "55.00", "65.00", "yes")
    assert shown[("oracle", 64, "perception")]["outside"] == "no" and shown[("oracle", 64, "perception")]["difference"] == "-1.00"
    assert shown[("oracle", 64, "refusal")]["outside"] == "" and shown[("oracle", 64, "refusal")]["difference"] == "0.00"
    missing = shown[("oracle", 256, "reasoning")]
    assert (missing["paper"], missing["run"], missing["difference"], missing["outside"]) == ("47.58", "", "", "")
    assert shown[("LLaVA-Video-7B", 64, "overall")]["outside"] == "no"
    # A paper row of the anomaly list says so beside each of its numbers.
    gemini = paper.paper_vs_run([_score("Gemini-2.5-Flash", 64, "refusal", 58.0)], ["Gemini-2.5-Flash"], [64], "rules", {})
    assert "460 unanswerable" in next(r for r in gemini if r["subset"] == "refusal")["paper_anomaly"]
    with pytest.raises(paper.NoPaperRow, match=r"no model of the run \(refuse, guess\) is a row of the paper's Tables 1 and 2"):
        paper.paper_vs_run(scores, ["refuse", "guess"], [64], "rules", {})
    with pytest.raises(paper.NoPaperRow, match=r"report.paper_names: oracle -> 'Qwen3-VL-32B': not a row"):
        paper.paper_vs_run(scores, ["oracle"], [64], "rules", {"oracle": "Qwen3-VL-32B"})


def test_the_paper_vs_run_command_writes_the_csv_and_the_table_and_refuses_in_one_line(tmp_path, capsys):
    scores = [_score("oracle", 64, subset, 50.0, 45.0, 55.0) for subset in ("overall", "perception", "reasoning", "non_refusal", "refusal")]
    write_scores(scores, tmp_path / "scores.csv")
    judged = tmp_path / "judgments" / "rules" / "oracle" / "honest" / "64.jsonl"  # beside scores.csv, as in results/
    judged.parent.mkdir(parents=True)
    judged.write_text('{"prompt": "honest"}\n')
    stamp(tmp_path / "scores.csv")
    out = ["--csv", str(tmp_path / "p.csv"), "--tex", str(tmp_path / "p.tex"), "--html", str(tmp_path / "p.html")]
    common = ["paper-vs-run", "--scores", str(tmp_path / "scores.csv"), "--levels", "64", "--judge", "rules", *out]
    assert report_main([*common, "--models", "oracle", "--paper-name", "oracle=Qwen3VL-32B"]) == 0
    with (tmp_path / "p.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert [r["subset"] for r in rows] == ["overall", "perception", "reasoning", "non_refusal", "refusal"]
    assert [r["outside"] for r in rows] == ["no", "no", "no", "yes", "yes"]  # 50.83, 53.00, 48.01 in [45, 55]; 44.99, 60.20 not
    tex = (tmp_path / "p.tex").read_text()
    assert r"oracle & Qwen3VL-32B & 64 & Overall & 50.83 & 50.00 [45.00, 55.00] & -0.83 \\" in tex
    assert r"oracle & Qwen3VL-32B & 64 & Refusal & \textbf{60.20} & 50.00 [45.00, 55.00] & -10.20 \\" in tex
    assert "2 of the 5 with an interval" in tex
    page = (tmp_path / "p.html").read_text()  # the same cells as a page, for Snakemake's report
    assert (
        "<td>Qwen3VL-32B</td><td>64</td><td>Refusal</td><td><strong>60.20</strong></td><td>50.00 [45.00, 55.00]</td><td>-10.20</td>" in page
    )
    assert "2 of the 5 with an interval" in page
    capsys.readouterr()
    assert report_main([*common, "--models", "oracle"]) == 1
    assert capsys.readouterr().err.startswith("error: no model of the run (oracle) is a row of the paper's Tables 1 and 2")
    assert report_main([*common, "--models", "oracle", "--paper-name", "oracle=Qwen3VL-32B", "--judge", "gpt-4o"]) == 1
    assert "no judged items for judge 'gpt-4o'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        report_main([*common, "--models", "oracle", "--paper-name", "oracle"])
    assert "'oracle' is not MODEL=ROW" in capsys.readouterr().err
