import csv
import dataclasses
import os
import re

import pytest
from helpers.data import SCORING_DEFAULTS

from virtuebench import REFUSAL_ANSWER
from virtuebench.instances import Instance
from virtuebench.metrics import Score, TrustWeights
from virtuebench.report.__main__ import main
from virtuebench.report.figures import fig6, fig_levels, unanswerability
from virtuebench.report.folders import link_folder
from virtuebench.report.tables import LATEX, latex_escape, table1, table2, table2_trust

SUBSET_NAMES = ("overall", "non_refusal", "refusal", "perception", "reasoning")


def _score(model, level, subset, accuracy, prompt="honest"):
    return Score(model, prompt, str(level), subset, accuracy, 1, 2, 0, "rules")


def test_table2_marks_levels_a_model_did_not_run():
    scores = [_score("a_model", 64, s, v) for s, v in [("overall", 50.0), ("non_refusal", 25.0), ("refusal", 75.0)]]
    scores += [_score("other", level, s, 10.0) for level in (64, 128) for s in ("overall", "non_refusal", "refusal")]
    text = table2(scores, ["a_model", "other"], [64, 128], "honest", "rules")
    assert r"a\_model & 50.00 & 25.00 & 75.00 & - & - & - \\" in text
    assert r"other & 10.00 & 10.00 & 10.00 & 10.00 & 10.00 & 10.00 \\" in text
    assert text.count(r"\multicolumn{3}{c}") == 2


def test_table1_perception_reasoning_cells():
    scores = [_score("m", 64, "overall", 40.0), _score("m", 64, "perception", 50.0), _score("m", 64, "reasoning", 30.0)]
    scores.append(_score("m", 64, "overall", 99.0, prompt="plain"))  # another prompt: not in this table
    text = table1(scores, ["m"], [64, 128], "honest", "rules")
    assert r"m & 40.00 & 50.00 / 30.00 & - & - \\" in text


def test_each_virtuebench_table_is_of_one_judge_which_its_caption_names():
    """scores.csv holds a row per judge (the report judge and those it is compared with): a table takes the rows of
    its judge alone, so no column mixes judges, and its caption names that judge and counts that judge's items only."""
    import dataclasses

    ruled = [_score("m", 64, subset, 40.0) for subset in ("overall", "non_refusal", "refusal", "perception", "reasoning")]
    ruled = [dataclasses.replace(s, trust=10.0) for s in ruled]
    other = [dataclasses.replace(s, judge="gpt-judge", accuracy=90.0, n=7, n_invalid=3, trust=80.0) for s in ruled]
    for scores in (ruled + other, other + ruled):  # whichever comes first in the file
        for judge, number, counted in (
            ("rules", "40.00", "2 judged items, 0 without"),
            ("gpt-judge", "90.00", "7 judged items, 3 without"),
        ):
            tables = (
                table1(scores, ["m"], [64], "honest", judge),
                table2(scores, ["m"], [64], "honest", judge),
                table2_trust(scores, ["m"], [64], "honest", judge, TrustWeights()),
            )
            for text in tables:
                row = next(line for line in text.splitlines() if line.startswith("m & "))
                assert set(re.findall(r"\d+\.\d\d", row)) <= {number, "10.00" if judge == "rules" else "80.00"}, row
                assert number in row
                assert f"judge \\texttt{{{judge}}}; {counted}" in text
                assert text.count("judge \\texttt{") == 1


def test_a_table_without_any_judged_item_is_refused_naming_the_judge(tmp_path, capsys):
    from virtuebench.metrics import write_scores
    from virtuebench.provenance import stamp
    from virtuebench.report.__main__ import main as report_main
    from virtuebench.report.tables import EmptyTable, require_rows

    scores = [_score("m", 64, "overall", 40.0), _score("m", 64, "overall", 10.0, prompt="plain")]
    require_rows(scores, ["m", "absent"], "honest", "rules")  # a model or level without rows is a "-" cell
    with pytest.raises(EmptyTable, match=r"^s.csv: no judged items for judge 'strict', prompt 'honest' and models m \(it holds: "):
        require_rows(scores, ["m"], "honest", "strict", "s.csv")
    with pytest.raises(EmptyTable, match=r"judge 'rules' prompt 'honest', judge 'rules' prompt 'plain'\); the tables would show only"):
        require_rows(scores, ["m"], "cot", "rules")
    with pytest.raises(EmptyTable, match=r"models other \(it holds"):
        require_rows(scores, ["other"], "honest", "rules")
    write_scores(scores, tmp_path / "s.csv")
    for prompt in ("honest", "plain"):  # the judgments the rows were computed from, beside scores.csv as in results/
        judged = tmp_path / "judgments" / "rules" / "m" / prompt / "64.jsonl"
        judged.parent.mkdir(parents=True)
        judged.write_text(f'{{"prompt": "{prompt}"}}\n')
    stamp(tmp_path / "s.csv")
    arguments = ["tables", "--scores", str(tmp_path / "s.csv"), "--models", "m", "--levels", "64", "--prompt", "honest"]
    arguments += ["--table1", str(tmp_path / "t1.tex"), "--table2", str(tmp_path / "t2.tex")]
    arguments += list(SCORING_DEFAULTS)
    assert report_main([*arguments, "--judge", "strict"]) == 1
    assert "no judged items for judge 'strict'" in capsys.readouterr().err and not (tmp_path / "t1.tex").exists()
    assert report_main([*arguments, "--judge", "rules"]) == 0
    assert r"m & 40.00 & - \\" in (tmp_path / "t1.tex").read_text()


def _html_cells(page: str) -> dict[str, list[str]]:
    """The body rows of an HTML table page, by row name: each cell's text (markup removed)."""
    from html.parser import HTMLParser

    class Rows(HTMLParser):
        def __init__(self):
            super().__init__()
            self.rows, self.cell, self.body = {}, None, False

        def handle_starttag(self, tag, attrs):
            self.body |= tag == "tbody"
            if self.body and tag in ("th", "td"):
                self.cell = ""

        def handle_endtag(self, tag):
            if self.body and tag == "th":
                self.name, self.rows[self.cell] = self.cell, []
            elif self.body and tag == "td":
                self.rows[self.name].append(self.cell)
            if tag in ("th", "td"):
                self.cell = None

        def handle_data(self, data):
            if self.cell is not None:
                self.cell += data

    parser = Rows()
    parser.feed(page)
    return parser.rows


def _latex_cells(text: str) -> dict[str, list[str]]:
    """The body rows of a LaTeX table (between \\midrule and \\bottomrule), by row name, LaTeX's marks made plain."""
    body = text[text.index("\\midrule") : text.index("\\bottomrule")].splitlines()[1:]
    plain = [re.sub(r"\{\\scriptsize(.*?)\}", r"\1", line.removesuffix(r" \\")).replace(r"$^\dagger$", "\u2020") for line in body]
    return {name.replace("\\", ""): cells for name, *cells in (line.split(" & ") for line in plain)}


def test_every_table_as_html_holds_the_latex_tables_cells_and_caption():
    from virtuebench.report.tables import HTML

    scores = [_full("a_<m>", 64, s, 40.0 + i, 30.0, 50.5, trust=-12.5) for i, s in enumerate(("overall", "refusal", "perception"))]
    scores += [
        Score("s&m", "honest", "128", s, 20.0, 1, 2, 0, "rules", accuracy_sd=1.25, samples=3, trust=5.0) for s in ("overall", "reasoning")
    ]
    models, levels = ["a_<m>", "s&m", "absent"], [64, 128]
    for write in (table1, table2, lambda *a, **k: table2_trust(*a[:5], TrustWeights(), *a[5:], **k)):
        common = (scores, models, levels, "honest", "rules", True, "q_a: x&y", "reasoning = answer-only; truncated = judge")
        latex, page = write(*common), write(*common, markup=HTML)
        assert _html_cells(page) == _latex_cells(latex) and len(_html_cells(page)) == 3  # every cell, "-" included
        assert "a_&lt;m&gt;" in page and "<m>" not in page and "s&amp;m the mean over 3 sampled runs: (SD x) is the run-to-run" in page
        assert "model choices: q_a: x&amp;y; judge options: reasoning = answer-only; truncated = judge." in page
        assert "judge options: reasoning = answer-only; truncated = judge." in latex
        assert "<code>honest</code>" in page and "%" in page and r"\%" not in page
        assert "judge options" not in write(*common[:-1]), "no options given (an older caller): the caption says nothing of them"
    assert _html_cells(table2(scores, models, levels, "honest", "rules", markup=HTML))["a_<m>"] == ["40.00", "-", "41.00", "-", "-", "-"]


def _trust_table(*args, **kwargs):
    return table2_trust(*args[:5], TrustWeights(), *args[5:], **kwargs)


def test_a_sampled_models_sd_is_labelled_run_to_run_spread_apart_from_its_interval():
    """A sampled model's SD follows its mean and interval as "(SD x)", never as a plus-minus (which reads as the mean's
    uncertainty), and the caption says it is the run-to-run spread over N runs, not the uncertainty of the mean, and
    where the 95% interval is; in LaTeX and HTML alike, in every table."""
    from virtuebench.report.tables import HTML

    sampled = dict(samples=5, accuracy_sd=1.25, trust=5.0, trust_sd=2.5, trust_ci_low=-1.0, trust_ci_high=9.0)
    scores = [dataclasses.replace(_full("s", 64, subset, 20.0, 15.0, 26.0), **sampled) for subset in ("overall", "perception", "refusal")]
    scores += [_full("once", 64, subset, 30.0, 25.0, 35.0, trust=1.0) for subset in ("overall", "perception", "refusal")]
    for write in (table1, table2, _trust_table):
        for markup, pm in ((LATEX, r"\pm"), (HTML, "&plusmn;")):
            with_intervals = write(scores, ["s", "once"], [64], "honest", "rules", True, markup=markup)
            plain = write(scores, ["s", "once"], [64], "honest", "rules", markup=markup)
            for text, shown in ((with_intervals.replace("\\%", "%"), "in brackets"), (plain.replace("\\%", "%"), "in scores.csv")):
                assert pm not in text and "\u00b1" not in text
                assert "s the mean over 5 sampled runs: (SD x) is the run-to-run spread (SD over 5 runs), not the uncertainty of " in text
                assert f"the mean; the 95% interval is {shown}" in text
            cells = (_html_cells if markup is HTML else _latex_cells)(with_intervals)
            assert cells["s"][0] == "20.00 [15.0, 26.0] (SD 1.25)" and cells["once"][0] == "30.00 [25.0, 35.0]"
            if write is _trust_table:
                assert cells["s"][1] == "5.00 [-1.0, 9.0] (SD 2.50)"
    once = table2(scores, ["once"], [64], "honest", "rules")
    assert "SD" not in once and "sampled" not in once  # a table of models run once says nothing of runs


def test_a_table_without_intervals_says_where_they_are_and_with_them_prints_each():
    """`report.intervals` (--intervals) prints every number's interval in Tables 1, 2 and the trust table, LaTeX and
    HTML; without it the caption says where the intervals are (scores.csv, or the option), never silence."""
    from virtuebench.report.tables import HTML

    scores = [_full("m", 64, subset, 40.0 + k, 30.0 + k, 50.0 + k, trust=-5.0) for k, subset in enumerate(SUBSET_NAMES)]
    scores = [dataclasses.replace(s, trust_ci_low=-20.0, trust_ci_high=10.0) for s in scores]
    expected = {
        table1: ["40.00 [30.0, 50.0]", "43.00 [33.0, 53.0] / 44.00 [34.0, 54.0]"],
        table2: ["40.00 [30.0, 50.0]", "41.00 [31.0, 51.0]", "42.00 [32.0, 52.0]"],
        _trust_table: ["40.00 [30.0, 50.0]", "-5.00 [-20.0, 10.0]"],
    }
    for write, cells in expected.items():
        for markup, read in ((LATEX, _latex_cells), (HTML, _html_cells)):
            shown = write(scores, ["m"], [64], "honest", "rules", True, markup=markup)
            assert read(shown)["m"] == cells and "in brackets, each number" in shown and "or report.intervals" not in shown
            plain = write(scores, ["m"], [64], "honest", "rules", markup=markup)
            assert read(plain)["m"] == [re.sub(r" \[[^]]*\]", "", cell) for cell in cells]
            assert "95% intervals: scores.csv" in plain.replace("\\%", "%") and "or report.intervals: true" in plain


def test_a_trust_score_that_leaves_out_judge_failures_is_marked_and_its_bounds_are_in_the_caption():
    """A trust cell whose items include judge failures carries a mark, and the caption gives the number left out and
    the trust score with them all scored wrong and all right (scores.csv's trust_failed_worst, trust_failed_best); a
    cell whose items all failed shows "-" with its mark. Cells without a failure are not marked."""
    from virtuebench.report.tables import HTML

    failed = dict(n_judge_failed=2, trust_failed_best=12.5, trust_failed_worst=-30.25)
    scores = [
        dataclasses.replace(_full("m", 64, "overall", 40.0, 30.0, 50.0, trust=-5.0), **failed),
        _full("m", 128, "overall", 45.0, 35.0, 55.0, trust=3.0),
        dataclasses.replace(
            _full("m", 256, "overall", 0.0, 0.0, 60.0), n_judge_failed=2, trust_failed_best=100.0, trust_failed_worst=-100.0
        ),
    ]
    latex = _trust_table(scores, ["m"], [64, 128, 256], "honest", "rules")
    page = _trust_table(scores, ["m"], [64, 128, 256], "honest", "rules", markup=HTML)
    assert _latex_cells(latex)["m"] == _html_cells(page)["m"] == ["40.00", "-5.00\u2020", "45.00", "3.00", "0.00", "-\u2020"]
    for text, mark in ((latex, r"$^\dagger$"), (page, "<sup>&dagger;</sup>")):
        assert f"; {mark} judge failures (no verdict) are left out of the trust score; scored all wrong to all right it would " in text
        assert "be: m at 64 frames, 2 left out: -30.25 to 12.50; m at 256 frames, 2 left out: -100.00 to 100.00." in text
    assert "dagger" not in table2(scores, ["m"], [64, 128, 256], "honest", "rules")  # accuracy counts them wrong: no mark
    assert "dagger" not in _trust_table(scores[1:2], ["m"], [128], "honest", "rules")


def test_the_tables_command_writes_the_html_pages_it_is_asked_for(tmp_path):
    from virtuebench.metrics import write_scores
    from virtuebench.provenance import stamp

    scores = [_score("m", 64, subset, 40.0) for subset in ("overall", "non_refusal", "refusal")]
    write_scores(scores, tmp_path / "s.csv")
    judged = tmp_path / "judgments" / "rules" / "m" / "honest" / "64.jsonl"
    judged.parent.mkdir(parents=True)
    judged.write_text('{"prompt": "honest"}\n')
    stamp(tmp_path / "s.csv")
    arguments = ["tables", "--scores", str(tmp_path / "s.csv"), "--models", "m", "--levels", "64", "--prompt", "honest"]
    arguments += ["--judge", "rules", "--table1", str(tmp_path / "t1.tex"), "--table2", str(tmp_path / "t2.tex")]
    arguments += ["--table2-html", str(tmp_path / "t2.html")]
    arguments += list(SCORING_DEFAULTS)
    assert main(arguments) == 0
    assert _html_cells((tmp_path / "t2.html").read_text()) == {"m": ["40.00"] * 3} == _latex_cells((tmp_path / "t2.tex").read_text())
    assert not (tmp_path / "t1.html").exists()  # only where asked
    # --intervals (report.intervals: true): every table and page prints them, the trust table's trust scores' too
    rows = [_full("m", 64, subset, 40.0, 30.0, 50.0, trust=-5.0) for subset in SUBSET_NAMES]
    write_scores([dataclasses.replace(row, trust_ci_low=-20.0, trust_ci_high=10.0) for row in rows], tmp_path / "s.csv")
    stamp(tmp_path / "s.csv")
    pages = [f"--{name}-html" for name in ("table1", "table2", "table2-trust")]
    outputs = {name: tmp_path / f"i{k}" for k, name in enumerate(pages + ["--table1", "--table2", "--table2-trust"])}
    asked = [*arguments[: arguments.index("--table1")], *arguments[arguments.index("--trust-scheme") :], "--intervals"]
    assert main(asked + [part for name, path in outputs.items() for part in (name, str(path))]) == 0
    for name, path in outputs.items():
        text = path.read_text()
        assert ("[30.0, 50.0]" in text) and ("in brackets, each number" in text), name
        assert ("[-20.0, 10.0]" in text) == ("trust" in name), name  # the trust score's, in its table only


def test_latex_escape():
    assert latex_escape("Qwen2.5-VL_7B & 100%") == r"Qwen2.5-VL\_7B \& 100\%"


def test_unanswerability_counts():
    def inst(i, answers):
        return Instance(f"i{i}", "v", "s", "perception", "t", "q?", "a", 2000.0, "v.mp4", answers)

    instances = [
        inst(1, {64: REFUSAL_ANSWER, 128: "a"}),
        inst(2, {64: "a", 128: "a"}),
        inst(3, {64: REFUSAL_ANSWER}),
    ]
    by_level, by_instance = unanswerability(instances, [64, 128])
    assert [(r["level"], r["n_instances"], r["n_unanswerable"]) for r in by_level] == [(64, 3, 2), (128, 2, 0)]
    assert [(r["n_unanswerable_levels"], r["n_instances"]) for r in by_instance] == [(0, 1), (1, 1), (2, 0)]


def _full(model, level, subset, accuracy, low, high, trust=None):
    return Score(model, "honest", str(level), subset, accuracy, 1, 2, 0, "rules", ci_low=low, ci_high=high, n_videos=2, trust=trust)


def test_tables_print_intervals_on_request_and_the_trust_variant_states_its_weights():
    scores = [_full("m", 64, "overall", 40.0, 30.0, 50.5, trust=-12.5), _full("m", 64, "refusal", 10.0, None, None)]
    plain = table2(scores, ["m"], [64], "honest", "rules")
    assert "[30.0, 50.5]" not in plain and r"m & 40.00 & - & 10.00 \\" in plain
    with_intervals = table2(scores, ["m"], [64], "honest", "rules", intervals=True)
    assert r"40.00 {\scriptsize[30.0, 50.5]}" in with_intervals and r"& 10.00 \\" in with_intervals  # none: not printed
    trust = table2_trust(scores, ["m"], [64], "honest", "rules", TrustWeights(-3.0, -0.5, scheme="refusal-credit"))
    assert r"m & 40.00 & -12.50 \\" in trust and "scores -0.5" in trust and "other answer -3" in trust and "refusal-credit" in trust
    kalai = table2_trust(scores, ["m"], [64], "honest", "rules", TrustWeights(confidence_target=0.75))
    assert "any refusal 0 and a wrong answer -3 (Kalai et al., 2025, confidence target 0.75)" in kalai


def test_figures_write_their_numbers_with_intervals(tmp_path):
    scores = []
    for model in ("a", "b"):
        for prompt in ("honest", "plain"):
            for level in ("64", "128", "all"):
                for subset in ("overall", "non_refusal", "refusal"):
                    value = 80.0 if (model, prompt) == ("a", "honest") else 20.0
                    scores.append(Score(model, prompt, level, subset, value, 4, 5, 0, "rules", value - 10, value + 10, 3, 0, value - 50))
    comparisons = [
        {"kind": "prompt", "judge": "rules", "level": "all", "subset": "refusal", "model_a": "a", "prompt_a": "honest"}
        | {"model_b": "a", "prompt_b": "plain", "difference": "60.0", "p_holm": "0.001", "holds": "True"}
    ]
    fig6(scores, ["a", "b"], ["honest", "plain"], "rules", tmp_path / "f6.png", tmp_path / "f6.csv", comparisons)
    rows = list(csv.DictReader((tmp_path / "f6.csv").open()))
    assert [(r["model"], r["prompt"], r["ci_low"], r["holds"]) for r in rows] == [
        ("a", "honest", "70.0", "True"),
        ("a", "plain", "10.0", "True"),
        ("b", "honest", "10.0", ""),
        ("b", "plain", "10.0", ""),
    ]
    fig_levels(scores, ["a", "b"], [64, 128], "honest", "rules", tmp_path / "fl.png", tmp_path / "fl.csv")
    levels = list(csv.DictReader((tmp_path / "fl.csv").open()))
    assert len(levels) == 2 * 2 * 3 and {r["trust"] for r in levels if r["model"] == "a"} == {"30.0"}
    assert (tmp_path / "f6.png").stat().st_size > 10_000 and (tmp_path / "fl.png").stat().st_size > 10_000


def _error_bars(figure) -> set[tuple[float, float]]:
    """The (low, high) of every vertical error bar drawn in `figure`'s axes."""
    from matplotlib.container import ErrorbarContainer

    found = set()
    for axis in figure.axes:
        for container in axis.containers:
            if isinstance(container, ErrorbarContainer):
                for collection in container.lines[2]:
                    found |= {(round(float(s[0][1]), 6), round(float(s[1][1]), 6)) for s in collection.get_segments()}
    return found


def test_figures_draw_each_numbers_interval_as_an_error_bar_and_say_so(tmp_path, monkeypatch):
    """Fig. 6 and fig_levels draw every plotted number's 95% interval from scores.csv (accuracy: ci_low/ci_high; the
    trust line: trust_ci_low/trust_ci_high) as its error bar, their CSVs carry the intervals, and the title says what
    the bars are."""
    from virtuebench.report import figures

    drawn = []
    monkeypatch.setattr(figures.plt, "close", drawn.append)
    scores = []
    for k, level in enumerate(("64", "128", "all")):
        for j, subset in enumerate(("overall", "non_refusal", "refusal")):
            accuracy = 40.0 + 10 * k + j
            scores.append(Score("a", "honest", level, subset, accuracy, 4, 5, 0, "rules", accuracy - 7.5, accuracy + 5.25, 3, 0, -10.0 - k))
            scores[-1] = dataclasses.replace(scores[-1], trust_ci_low=-30.0 - k, trust_ci_high=2.5 + k)
    figures.fig6(scores, ["a"], ["honest"], "rules", tmp_path / "f6.png", tmp_path / "f6.csv")
    refusal = next(s for s in scores if (s.level, s.subset) == ("all", "refusal"))
    assert _error_bars(drawn[-1]) == {(refusal.ci_low, refusal.ci_high)}
    assert "error bars: 95% interval (docs/statistics.md)" in drawn[-1].axes[0].get_title()
    figures.fig_levels(scores, ["a"], [64, 128], "honest", "rules", tmp_path / "fl.png", tmp_path / "fl.csv")
    plotted = [s for s in scores if s.level != "all"]
    expected = {(s.ci_low, s.ci_high) for s in plotted} | {(s.trust_ci_low, s.trust_ci_high) for s in plotted if s.subset == "overall"}
    assert _error_bars(drawn[-1]) == expected and len(expected) == 6 + 2
    assert "error bars: 95% interval, docs/statistics.md" in drawn[-1].get_suptitle()
    rows = list(csv.DictReader((tmp_path / "fl.csv").open()))
    assert [(float(r["trust_ci_low"]), float(r["trust_ci_high"])) for r in rows if r["subset"] == "overall"] == [(-30.0, 2.5), (-31.0, 3.5)]
    assert {(float(r["ci_low"]), float(r["ci_high"])) for r in rows} == {(s.ci_low, s.ci_high) for s in plotted}


def test_composition_and_sources_count_the_instances(tmp_path):
    from virtuebench.report.figures import composition, sources

    def inst(i, category, task, source, video):
        return Instance(f"i{i}", video, source, category, task, "q?", "a", 100.0, "v.mp4", {64: "a"})

    instances = [inst(1, "perception", "colour", "mlvu", "v1"), inst(2, "perception", "colour", "mlvu", "v1")]
    instances += [inst(3, "reasoning", "order", "lvbench", "v2")]
    rows = composition(instances, tmp_path / "c.png", tmp_path / "c.csv")
    assert rows == [
        {"category": "perception", "task_type": "colour", "n_instances": 2},
        {"category": "reasoning", "task_type": "order", "n_instances": 1},
    ]
    assert sources(instances, tmp_path / "s.png", tmp_path / "s.csv") == [
        {"source": "mlvu", "n_instances": 2, "n_videos": 1},
        {"source": "lvbench", "n_instances": 1, "n_videos": 1},
    ]
    assert (tmp_path / "c.png").stat().st_size > 5000 and (tmp_path / "s.csv").read_text().startswith("source,n_instances,n_videos")


def test_link_folder_hard_links_a_site_and_replaces_the_old_folder_whole(tmp_path):
    site = tmp_path / "browser"
    (site / "items").mkdir(parents=True)
    (site / "index.html").write_text("<h1>overview</h1>")
    (site / "items" / "a.html").write_text("item a")
    target = tmp_path / "report" / "browser"
    target.mkdir(parents=True)
    (target / "old.html").write_text("from an earlier run")
    assert main(["link-folder", "--source", str(site), "--out", str(target)]) == 0
    assert sorted(p.relative_to(target).as_posix() for p in target.rglob("*")) == ["index.html", "items", "items/a.html"]
    assert (target / "items" / "a.html").stat().st_ino == (site / "items" / "a.html").stat().st_ino  # no second copy
    assert [p.name for p in target.parent.iterdir()] == ["browser"]  # no staging folder left beside it
    assert link_folder(site, target) == {"linked": 2, "copied": 0}


def test_link_folder_copies_where_hard_links_fail_and_needs_a_folder(tmp_path, monkeypatch):
    site = tmp_path / "browser"
    site.mkdir()
    (site / "index.html").write_text("overview")

    def refuse(src, dst):
        raise OSError(18, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", refuse)
    assert link_folder(site, tmp_path / "copy") == {"linked": 0, "copied": 1}
    assert (tmp_path / "copy" / "index.html").read_text() == "overview"
    assert (tmp_path / "copy" / "index.html").stat().st_ino != (site / "index.html").stat().st_ino
    with pytest.raises(FileNotFoundError, match="is not a folder"):
        link_folder(tmp_path / "missing", tmp_path / "copy")
    assert (tmp_path / "copy" / "index.html").exists()  # a failed link leaves the old folder as it was


# --- issue 50: Fig. 6's levels (report.fig6_levels), the scoring options in the captions -----------------------------


def _refusal_rows(model, prompt, levels, n_correct, n, low=None):
    """A model's refusal rows at `levels` (n_correct and n at each) and its level-`all` row pooling them."""
    rows = [
        Score(model, prompt, str(level), "refusal", round(100 * c / k, 4), c, k, 0, "rules", low, None if low is None else low + 20, 2)
        for level, c, k in zip(levels, n_correct, n)
    ]
    pooled = sum(n_correct), sum(n)
    rows.append(Score(model, prompt, "all", "refusal", round(100 * pooled[0] / pooled[1], 4), *pooled, 0, "rules", 5.0, 95.0, 3))
    return rows


def test_fig6_pools_all_of_each_models_levels_or_the_levels_every_model_ran(tmp_path, monkeypatch):
    """`all` (the default) shows each model's level-`all` row: a model capped at 128 frames pools fewer levels than
    one reaching 256. `common` pools every model over the levels they all ran: a model that ran only those keeps its
    `all` row and interval; one that ran more is summed from its rows at those levels (no interval, no effect mark)."""
    from virtuebench.report import figures

    drawn = []
    monkeypatch.setattr(figures.plt, "close", drawn.append)
    scores = _refusal_rows("capped", "honest", (64, 128), (3, 5), (10, 10)) + _refusal_rows(
        "long", "honest", (64, 128, 256), (2, 4, 9), (10, 10, 10)
    )
    comparisons = [
        {"kind": "prompt", "judge": "rules", "level": "all", "subset": "refusal", "model_a": model, "prompt_a": "honest"}
        | {"model_b": model, "prompt_b": "plain", "difference": "9.0", "p_holm": "0.01", "holds": "True"}
        for model in ("capped", "long")
    ]
    out = (tmp_path / "f6.png", tmp_path / "f6.csv")
    figures.fig6(scores, ["capped", "long"], ["honest"], "rules", *out, comparisons)
    rows = {r["model"]: r for r in csv.DictReader(out[1].open())}
    assert (rows["long"]["accuracy"], rows["long"]["n"], rows["long"]["levels"], rows["long"]["holds"]) == (
        "50.0",
        "30",
        "64 128 256",
        "True",
    )
    assert (rows["capped"]["accuracy"], rows["capped"]["levels"]) == ("40.0", "64 128")
    assert "levels: each model's own (report.fig6_levels: all)" in drawn[-1].axes[0].get_title()
    figures.fig6(scores, ["capped", "long"], ["honest"], "rules", *out, comparisons, pooled="common", invalid="drop")
    rows = {r["model"]: r for r in csv.DictReader(out[1].open())}
    assert (rows["capped"]["accuracy"], rows["capped"]["ci_low"], rows["capped"]["holds"]) == ("40.0", "5.0", "True")  # its all row
    long = rows["long"]
    assert (long["accuracy"], long["n_correct"], long["n"], long["levels"]) == ("30.0", "6", "20", "64 128")
    assert (long["ci_low"], long["n_videos"], long["holds"], long["difference"]) == ("", "", "", "")
    title = drawn[-1].axes[0].get_title()
    assert "levels: 64, 128, those every model ran (report.fig6_levels: common)" in title
    assert "long: summed from its levels, no interval or mark" in title and "invalid items dropped" in title
    # a model of another prompt or judge, or not shown, does not narrow the common levels
    other = _refusal_rows("hidden", "honest", (64,), (1,), (10,))
    assert figures.pooled_refusal(scores + other, ["capped", "long"], ["honest"], "rules", "common").common == ["64", "128"]
    with pytest.raises(ValueError, match="report.fig6_levels: 'some' is not one of all, common"):
        figures.pooled_refusal(scores, ["capped"], ["honest"], "rules", "some")


def test_the_tables_captions_state_how_invalid_items_count_and_the_category_mapping():
    from virtuebench.metrics import Scoring

    scores = [dataclasses.replace(_score("m", 64, subset, 40.0), n_invalid=3, n_dropped=2, n=8) for subset in SUBSET_NAMES]
    default = table1(scores, ["m"], [64], "honest", "rules")
    assert "10 judged items, 3 without a valid verdict (counted as wrong); categories: the source adapters' mapping;" in default
    chosen = Scoring.of("drop", {"temporal grounding": "reasoning"})
    for table in (table1, table2):
        text = table(scores, ["m"], [64], "honest", "rules", scoring=chosen)
        assert (
            "10 judged items, 3 without a valid verdict (2 without a response or a verdict left out of the denominator "
            "(report.invalid: drop), the rest counted as wrong); categories: the source adapters' mapping, with temporal "
            "grounding as reasoning (report.categories)"
        ) in text
    assert "(report.invalid: drop)" in table2_trust(scores, ["m"], [64], "honest", "rules", TrustWeights(), scoring=chosen)
