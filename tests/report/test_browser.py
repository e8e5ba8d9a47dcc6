"""The per-item results browser (virtuebench.browser): pages from the records, bad input shown as such,
and (where Debian's chromium and its driver are installed, as CI does) clicked through in a real browser."""

from __future__ import annotations

import dataclasses
import html
import json
import os
import re
import shutil
from pathlib import Path

import pytest
import yaml
from helpers.browser import click_through, driver, overview
from helpers.data import REPO, SHARED, build_bench

from virtuebench import REFUSAL_ANSWER
from virtuebench.browser import FLAGS, SHEET_COLUMNS, SUBSETS, Options, Site, legend_entries, model_kind, number, safe_name
from virtuebench.comparisons import compare, pairs, read_comparisons, write_comparisons
from virtuebench.cvrr import DIMENSIONS, TITLES
from virtuebench.cvrr.published import PUBLISHED_JUDGE, read_published
from virtuebench.cvrr.scoring import dimension_scores, model_rows
from virtuebench.instances import read_instances
from virtuebench.judge.explain import explain
from virtuebench.judge.rules import RulesJudge
from virtuebench.metrics import compute_scores, read_scores, write_scores
from virtuebench.records import Judgment
from virtuebench.support.bootstrap import Bootstrap


def _judgments(bench: Path) -> list[Judgment]:
    """Two judges' verdicts on an always-refusing model, as the judge stage writes them: the rules judge's own (its
    reasons end in its rule labels), and another judge that disagrees on the answerable items."""
    records = []
    rules = RulesJudge()
    for inst in read_instances(bench / "instances.parquet"):
        for level, answer in inst.answers.items():
            for judge, verdict in (("rules", 1), ("other", 0)):
                unanswerable = answer == REFUSAL_ANSWER
                reason = rules.judge(inst.question, answer, REFUSAL_ANSWER).reason if judge == "rules" else "refusal detected"
                records.append(
                    Judgment(
                        inst.instance_id,
                        "refuse",
                        "honest",
                        level,
                        judge,
                        inst.category,
                        inst.task_type,
                        answer,
                        unanswerable,
                        REFUSAL_ANSWER,
                        1,
                        int(unanswerable) if judge == "rules" else verdict,
                        True,
                        reason,
                        None,
                        "fp",
                        question=inst.question,
                        video_id=inst.video_id,
                    )
                )
    return records


def _oracle(judgments: list[Judgment]) -> list[Judgment]:
    """A model right on every item (the demo's oracle under the honest prompt): the refusal where the truth is the
    refusal, the truth itself elsewhere; the rules judge's verdicts only."""
    return [
        dataclasses.replace(
            j, model="oracle", response=j.answer, refusal=int(j.is_unanswerable), judgement=1, reason="oracle", confident=True
        )
        for j in judgments
        if j.judge == "rules"
    ]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    bench = build_bench(tmp_path_factory.mktemp("browser"), 3, 300, [64, 128, 256])
    instances = read_instances(bench / "instances.parquet")
    judgments = _judgments(bench)
    judgments += _oracle(judgments)
    broken = instances[-1]
    shutil.rmtree(bench / "frames" / broken.video_id)  # its frames are gone
    first = next(i for i in instances if 128 in i.answers and i.video_id != broken.video_id)
    missing = next(j for j in judgments if j.instance_id == first.instance_id and j.level == 128 and j.judge == "rules")
    judgments.remove(missing)  # one judgment never written
    orphan = Judgment(
        "ghost/1", "refuse", "honest", 64, "rules", "perception", "t", "red", False, None, 0, 0, False, "", "no response", "fp"
    )
    # As the workflow gives them: scores.csv holds the report judge's (rules) numbers, the other judge's are scored by
    # the browser itself; the legend is the registry's words.
    write_scores(compute_scores(j for j in [*judgments, orphan] if j.judge == "rules"), bench / "scores.csv")
    # and comparisons.csv the report judge's paired comparisons (refuse against oracle, as Table 2's adjacent rows)
    compared, _ = compare(
        [j for j in judgments if j.judge == "rules"], pairs(["refuse", "oracle"], ["honest"], "honest"), "rules", Bootstrap()
    )
    write_comparisons(compared, bench / "comparisons.csv")
    registry = yaml.safe_load((REPO / "config" / "models.yaml").read_text())
    options = Options(
        scores=read_scores(bench / "scores.csv"),
        legend=legend_entries(registry, ["refuse", "oracle"]),
        comparisons=read_comparisons(bench / "comparisons.csv"),
    )
    counts = Site(instances, [*judgments, orphan], bench / "frames", bench / "site", options=options).build()
    (bench / "site" / "judgments.json").write_text(json.dumps([j.__dict__ for j in [*judgments, orphan]]))
    return bench / "site", instances, broken, counts, first


def test_the_overview_links_every_number_to_its_items(site):
    out, instances, _, counts, first = site
    index = (out / "index.html").read_text()
    assert counts["items"] == len(instances) + 1 and "Judge rules" in index and "Judge other" in index
    assert 'href="lists/rules/refuse/honest/64.html#refusal"' in index and "disagreement" in index
    listing = (out / "lists" / "rules" / "refuse" / "honest" / "64.html").read_text()
    assert f'href="../../../../items/{safe_name(first.instance_id)}.html#model=refuse&amp;prompt=honest&amp;level=64"' in listing or (
        f"../../../../items/{safe_name(first.instance_id)}.html#model=refuse&prompt=honest&level=64" in listing
    )


def test_the_overview_shows_the_numbers_of_scores_csv(site):
    """Every accuracy cell of the overview is the row virtuebench.metrics computes from the same records, with its 95%
    interval and counts, and beside the overall accuracy its trust score and interval: the report judge's read from
    scores.csv, the other judge's computed by the browser with the same function."""
    out = site[0]
    index = (out / "index.html").read_text()
    judgments = [Judgment(**record) for record in json.loads((out / "judgments.json").read_text())]
    shown = trusted = 0
    pooled = 0
    for score in compute_scores(judgments):
        if score.subset not in {subset for subset, _ in SUBSETS}:
            continue
        if score.level == "all":  # the levels pooled (Fig. 6's numbers): a row of its own, not a link
            pooled += (
                f'<td class="num">{number(score.accuracy, score.ci_low, score.ci_high)}<br><small>{score.n_correct}/{score.n}</small></td>'
                in index
            )
            continue
        assert f"{number(score.accuracy, score.ci_low, score.ci_high)}<br><small>{score.n_correct}/{score.n}</small>" in index, score
        assert score.ci_low is not None and f"[{score.ci_low:.2f}, {score.ci_high:.2f}]" in index
        shown += 1
        if score.subset == "overall":
            assert f'<td class="num">{number(score.trust, score.trust_ci_low, score.trust_ci_high)}</td>' in index, score
            trusted += 1
    assert shown >= 2 * 3 * 3 and trusted >= 3 * 3  # two judges, three levels, three subsets at least; the trust scores
    assert pooled >= 2 * 3 and index.count("all, pooled</td>") >= 2  # the pooled rows of both judges
    assert "Trust score [95% interval]" in index and "[no interval]" not in index


def test_the_overview_shows_every_paired_comparison_with_its_interval_and_verdict(site):
    """Under the report judge's numbers, comparisons.csv's rows: each difference with its 95% interval as the tables
    print numbers, its p-value, Holm-adjusted p and verdict; the summary counts the rows and those that hold."""
    out = site[0]
    index = (out / "index.html").read_text()
    rows = read_comparisons(out.parent / "comparisons.csv")
    assert len(rows) >= 4  # refuse against oracle at three levels and pooled, per subset
    section = index[index.index('<details class="comparisons">') :]
    holding = sum(row["holds"] == "True" for row in rows)
    assert f"Paired comparisons: {len(rows)} (comparisons.csv), {holding} hold" in section
    for row in rows:
        difference = number(float(row["difference"]), float(row["ci_low"]), float(row["ci_high"]))
        verdict = "yes" if row["holds"] == "True" else "no"
        p_holm = row["p_holm"] or "not in family"
        cells = f'<td class="num">{difference}</td><td class="num">{row["p_value"]}</td><td class="num">{p_holm}</td><td>{verdict}</td>'
        assert f"<td>{row['level']}</td><td>{row['subset']}</td>{cells}" in section, row
    assert index.count('<details class="comparisons">') == 1  # the other judge has none in comparisons.csv


def test_the_overview_labels_a_sampled_models_spread_and_bounds_a_trust_score_over_judge_failures(site, tmp_path):
    """A sampled model's cells carry "(SD x over N runs)", its run-to-run spread apart from the interval, and a trust
    score that leaves out judge failures carries its bounds (scores.csv's trust_failed_worst, trust_failed_best)."""
    bench = site[0].parent
    instances = read_instances(bench / "instances.parquet")
    once = [Judgment(**record) for record in json.loads((site[0] / "judgments.json").read_text())]
    once = [j for j in once if j.judge == "rules" and j.model == "refuse" and j.instance_id != "ghost/1"]
    failed = {once[0].instance_id}  # its second run: answered, no verdict from the judge
    runs = [dataclasses.replace(j, sample=0) for j in once]
    runs += [
        dataclasses.replace(j, sample=1, judgement=1 - j.judgement, valid=j.instance_id not in failed)
        for j in once
        if j.level == once[0].level or j.is_unanswerable
    ]
    scores = compute_scores(runs)
    Site(instances, runs, bench / "frames", tmp_path / "site", options=Options(scores=scores)).build()
    index = (tmp_path / "site" / "index.html").read_text()
    sampled = [s for s in scores if s.level != "all" and s.subset in {key for key, _ in SUBSETS} and s.accuracy_sd is not None]
    assert sampled
    for score in sampled:
        assert f"{number(score.accuracy, score.ci_low, score.ci_high)}<br><small>{score.n_correct}/{score.n * 2}</small>" in index
        assert f">(SD {score.accuracy_sd:.2f} over 2 runs)</small>" in index
    (bounded,) = [s for s in scores if s.level == str(once[0].level) and s.subset == "overall"]
    assert bounded.n_judge_failed == 1 and bounded.trust_failed_best is not None
    assert (
        f'{number(bounded.trust, bounded.trust_ci_low, bounded.trust_ci_high)}<br><small title="run-to-run spread, not the uncertainty '
        f'of the mean">(SD {bounded.trust_sd:.2f} over 2 runs)</small><br><small>&dagger; judge failures left out: 1; scored all '
        f"wrong to all right: {bounded.trust_failed_worst:.2f} to {bounded.trust_failed_best:.2f}</small>"
    ) in index
    (pooled,) = [s for s in scores if s.level == "all" and s.subset == "overall"]  # its row shows the bounds too
    assert f"scored all wrong to all right: {pooled.trust_failed_worst:.2f} to {pooled.trust_failed_best:.2f}</small>" in index
    assert index.count("&dagger; judge failures left out") == 2 and "not the uncertainty of its mean" in index  # the legend says so


def test_a_legend_says_what_each_model_column_and_flag_is_and_no_flag_is_shown_raw(site):
    out = site[0]
    index = (out / "index.html").read_text()
    text = html.unescape(re.sub(r"<[^>]+>", " ", index))  # what a reader sees
    registry = yaml.safe_load((REPO / "config" / "models.yaml").read_text())
    for model in ("refuse", "oracle"):
        assert " ".join(registry[model]["description"].split()) in " ".join(text.split())
    assert "baseline (no model)" in text and "the items whose truth at the level is an answer" in text
    for label, words in FLAGS.values():
        assert label in text and words in text
    assert "answered an unanswerable" not in text  # (no label of the old page survives by mistake)
    listing = (out / "lists" / "rules" / "refuse" / "honest" / "64.html").read_text()
    for page in (index, listing):
        seen = html.unescape(re.sub(r"<[^>]+>", " ", re.sub(r"<details.*?</details>", "", page, flags=re.S)))
        for key in FLAGS:
            if "_" in key:
                assert key not in seen, key  # a flag shown raw
    assert "refused an answerable item" in listing and "truth: the refusal" in listing


def test_every_registry_model_has_a_kind_in_words():
    """The legend's kinds from config/models.yaml: the three baselines, API models, open weights with their backend."""
    registry = yaml.safe_load((REPO / "config" / "models.yaml").read_text())
    kinds = {name: model_kind(entry, {"rules"}) for name, entry in legend_entries(registry, registry).items()}
    assert {kinds[name][0] for name in ("refuse", "guess", "oracle")} == {"baseline (no model)"}
    api = [name for name, entry in registry.items() if entry["backend"] == "openai"]
    local = [name for name, entry in registry.items() if entry.get("hub_id")]
    assert api and local and all(kinds[name][0] == "API model" for name in api)
    assert all(kinds[name][0] == "open weights, run here" and registry[name]["backend"] in kinds[name][1] for name in local)
    assert model_kind({"backend": "mine.module:Backend"}, {"rules"})[0] == "a backend of your own"
    assert model_kind(None, {PUBLISHED_JUDGE})[0] == "published results"


def test_the_page_says_why_a_trust_score_differs_from_accuracy(site):
    """The oracle is right on every item: accuracy 100, and under the default scheme (a refusal scores 0) a trust score
    equal to the share of its items whose truth is an answer; the page says so with this run's numbers."""
    out = site[0]
    index = html.unescape((out / "index.html").read_text())
    judgments = [Judgment(**record) for record in json.loads((out / "judgments.json").read_text())]
    oracle = [j for j in judgments if (j.model, j.judge, j.level) == ("oracle", "rules", 64)]
    answerable = sum(not j.is_unanswerable for j in oracle)
    score = next(s for s in compute_scores(oracle) if (s.level, s.subset) == ("64", "overall"))
    assert score.accuracy == 100 and score.trust == pytest.approx(100 * answerable / len(oracle), abs=1e-3) and 0 < answerable < len(oracle)
    assert "any refusal 0 and a wrong answer -1" in index and "has 100% accuracy but a trust score equal to the share" in index
    assert (
        f"oracle (prompt honest, 64 frames, judge rules): accuracy 100.00, trust score {score.trust:.2f}, as {answerable} of its {len(oracle)} items"
        in index
    )


def test_the_cli_refuses_a_scores_csv_not_made_from_the_judgments_and_names_a_bad_legend(site, tmp_path, capsys):
    """scores.csv (and comparisons.csv) as compute_scores writes it before the workflow stamps it (no row digests: as an
    edited or pre-digest file) is refused in one line naming it, as the tables refuse it; nothing is written."""
    from virtuebench.browser import main

    bench = site[0].parent
    common = ["--instances", str(bench / "instances.parquet"), "--frames-dir", str(bench / "frames"), "--out", str(tmp_path / "out")]
    common += ["--thumb-width", "64", "--trust-scheme", "kalai", "--confidence-target", "0.5", "--wrong-answer", "-1"]
    common += ["--unwarranted-refusal", "0"]
    assert main([*common, "--scores", str(bench / "scores.csv")]) == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and f"{bench / 'scores.csv'} has no row_digest column" in error and "refusing to write" in error
    assert not (tmp_path / "out").exists()
    assert main([*common, "--comparisons", str(bench / "comparisons.csv")]) == 1  # so is comparisons.csv, alike
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and f"{bench / 'comparisons.csv'} has no row_digest column" in error and "refusing to write" in error
    assert not (tmp_path / "out").exists()
    with pytest.raises(SystemExit) as stopped:
        main([*common, "--legend", "{refuse"])
    assert stopped.value.code == 2 and "--legend: not JSON" in capsys.readouterr().err


def test_an_item_page_shows_every_level_its_frames_and_what_is_missing(site):
    out, instances, broken, _, first = site
    text = (out / "items" / f"{safe_name(first.instance_id)}.html").read_text()
    assert first.question in text.replace("&#x27;", "'")
    for level in first.answers:
        assert f'id="level-{level}"' in text
    manifest = json.loads((out.parent / "frames" / first.video_id / "manifest.json").read_text())
    times = ",".join(f"{t:g}" for t in manifest["levels"]["64"]["timestamps"])
    assert f'data-times="{times}"' in text and f'data-columns="{SHEET_COLUMNS}"' in text
    assert (out / "thumbs" / first.video_id / "64.jpg").stat().st_size > 1000
    assert "no judgment record" in text  # the one removed at 128 frames
    gone = (out / "items" / f"{safe_name(broken.instance_id)}.html").read_text()
    assert "no frames" in gone and "frame manifest not found" in gone
    ghost = (out / "items" / f"{safe_name('ghost/1')}.html").read_text()
    assert "not in the instances table" in ghost and "invalid" in ghost


def test_verdicts_are_in_plain_words_with_the_rule_labels_behind_a_toggle(site):
    out, _, _, _, first = site
    listing = (out / "lists" / "rules" / "refuse" / "honest" / "64.html").read_text()
    judgments = [Judgment(**record) for record in json.loads((out / "judgments.json").read_text())]
    shown = [j for j in judgments if (j.judge, j.model, j.level, j.valid) == ("rules", "refuse", 64, True)]
    assert shown and all(re.search(r"\[.*@.*; (not )?confident\]$", j.reason) for j in shown)  # the rules judge's own reasons
    for judgment in shown:
        words = explain(judgment.reason)
        assert html.escape(words.reason) in listing and f"decided by: {html.escape(words.rules)}" in listing
        assert f'<details class="tags"><summary>rule labels</summary><code>{html.escape(words.labels[0])}</code></details>' in listing
    outside = re.sub(r"<details.*?</details>", "", listing)
    assert "case A" not in outside and "case B" not in outside and "@short" not in outside and "confident]" not in outside
    assert "the truth is the refusal: refusal phrase" in listing and "a refusal and nothing else; short answer" in listing
    other = (out / "lists" / "other" / "refuse" / "honest" / "64.html").read_text()
    assert "refusal detected" in other and "<details" not in other  # a reason without labels is shown as it is
    item = (out / "items" / f"{safe_name(first.instance_id)}.html").read_text()
    assert "decided by: " in item and '<details class="tags">' in item


def test_rows_follow_table_2s_order(site, tmp_path):
    """config.models' order, as Table 2 (and each model's prompts in config.prompts' order); a model the config does
    not list (CVRR-ES's published ones) after them; without an order, alphabetical."""
    out, instances, *_ = site
    judgments = [Judgment(**record) for record in json.loads((out / "judgments.json").read_text())]
    base = [j for j in judgments if j.judge == "rules" and j.level == 64]
    arms = [("oracle", "plain"), ("refuse", "honest"), ("guess", "plain"), ("guess", "honest"), ("published", "honest")]
    mixed = [dataclasses.replace(j, model=model, prompt=prompt) for model, prompt in arms for j in base]

    def rows(**order) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        folder = tmp_path / str(len(list(tmp_path.iterdir())))
        Site(instances, mixed, out.parent / "frames", folder, **order).build()
        index = (folder / "index.html").read_text()
        item = (folder / "items" / f"{safe_name(base[0].instance_id)}.html").read_text().split('id="level-64"')[1]
        overview = re.findall(r'<th class="arm" rowspan="\d+">(\S+) <span class="prompt">(\S+)</span></th>', index)
        return overview, re.findall(r'data-model="(\S+)" data-prompt="(\S+)"', item)

    wanted = [("refuse", "honest"), ("guess", "plain"), ("guess", "honest"), ("oracle", "plain"), ("published", "honest")]
    assert rows(models=["refuse", "guess", "oracle"], prompts=["plain", "honest"]) == (wanted, wanted)
    assert rows() == (sorted(arms), sorted(arms))


@pytest.fixture(scope="module")
def wide_site(site):
    """The site with the paper's five levels (the records at 64 frames copied to 512 and 1024)."""
    out, instances, *_ = site
    judgments = [Judgment(**record) for record in json.loads((out / "judgments.json").read_text())]
    wider = [dataclasses.replace(j, level=level) for j in judgments if j.level == 64 for level in (512, 1024)]
    registry = yaml.safe_load((REPO / "config" / "models.yaml").read_text())
    options = Options(legend=legend_entries(registry, ["refuse", "oracle"]))
    Site(instances, [*judgments, *wider], out.parent / "frames", out.parent / "wide", options=options).build()
    return out.parent / "wide"


def _cvrr_judgments() -> list[Judgment]:
    """This run's refuse at 8 frames, judged by rules; and the 11 models' published standard-prompting verdicts where
    shared/fixtures/cvrr-es is beside the repository (TimeChat's Table 2 average: 32.89; its items pooled: 33.83), else
    published-style verdicts (level 0, the published judge) of one model on dimensions of unequal sizes, so the mean
    over dimensions and the accuracy over pooled items differ."""
    records = []
    published = SHARED / "fixtures" / "cvrr-es"
    for k, dimension in enumerate(DIMENSIONS):
        for index in range(2 + 2 * k):
            instance = f"{dimension}/{index:04d}"
            right = int(index < 1 + k % 3)
            for model, level, judge, refusal in (("Video-Thing", 0, PUBLISHED_JUDGE, 0), ("refuse", 8, "rules", 1)):
                if model == "Video-Thing" and published.exists():
                    continue  # the release's models have dimensions of unequal sizes
                response = REFUSAL_ANSWER if refusal else "a guess"
                judgement = right if model == "Video-Thing" else 0
                records.append(
                    Judgment(
                        instance,
                        model,
                        "standard",
                        level,
                        judge,
                        dimension,
                        dimension,
                        "the truth",
                        False,
                        response,
                        refusal,
                        judgement,
                        True,
                        "published" if level == 0 else "refusal phrase",
                        None,
                        "fp",
                        question=f"q {instance}",
                    )
                )
    if published.exists():
        records += [j for j in read_published(published) if j.prompt == "standard"]
    return records


@pytest.fixture(scope="module")
def cvrr_site(tmp_path_factory):
    judgments = _cvrr_judgments()
    out = tmp_path_factory.mktemp("cvrr") / "site"
    registry = yaml.safe_load((REPO / "config" / "models.yaml").read_text())
    options = Options(benchmark="cvrr", legend=legend_entries(registry, ["refuse"]))
    Site([], judgments, out.parent / "frames", out, models=["refuse"], prompts=["standard"], options=options).build()
    return out, judgments


@pytest.fixture(scope="module")
def chromium():
    browser = driver()
    yield browser
    browser.quit()


def test_clicking_from_the_overview_to_an_item_in_a_real_browser(chromium, wide_site, tmp_path):
    """Overview -> list -> item. At 1,400 px with five levels nothing on the overview reaches past the window and
    nothing scrolls sideways, the page nor a box in it; the legend, the intervals and the trust score are in view."""
    shots = Path(os.environ.get("VB_SCREENSHOTS", tmp_path / "screenshots"))
    seen = click_through(wide_site, shots, chromium)
    assert seen["title"].startswith("Item ") and "Ground truth" in seen["text"]
    assert seen["listed"] >= 1 and seen["thumbs"] == 64 and "thumbs/" in seen["image"] and seen["focused"] >= 1
    for name in ("1-overview.png", "2-list.png", "3-item.png"):
        assert (shots / name).stat().st_size > 5000
    layout = seen["layout"]
    assert layout["window"] == 1400 and layout["page_scroll"] <= layout["page_client"], layout
    assert layout["beyond"] == [] and layout["scrollers"] == [], layout
    assert layout["headers"][2:4] == ["Accuracy [95% interval]", "Trust score [95% interval]"], layout["headers"]
    assert "Why the trust score differs from accuracy" in layout["legend"] and "judges disagree" in layout["legend"]
    assert re.search(r"\d+\.\d\d \[\d+\.\d\d, \d+\.\d\d\]", layout["text"]) and "1024" in layout["text"]
    print(f"\nscreenshots: {shots}")


def test_the_cvrr_overview_has_its_title_dimensions_and_table_2s_averages_in_a_real_browser(chromium, cvrr_site, tmp_path):
    """benchmark cvrr: titled CVRR-ES, its 11 dimensions as columns, no frame levels, no refusal columns, no sideways
    scroll at 1,400 px, and each row's average the one Table 2 computes (virtuebench.cvrr.scoring: the mean over the
    dimensions), not the pooled items' accuracy."""
    out, judgments = cvrr_site
    shots = Path(os.environ.get("VB_SCREENSHOTS", tmp_path / "screenshots"))
    seen = overview(chromium, out, shots / "4-cvrr-overview.png")
    assert seen["title"] == "CVRR-ES results" and "virtuebench results" not in seen["text"].lower()
    headers = seen["headers"]
    assert headers[1:12] == [" ".join(TITLES[d].split()) for d in DIMENSIONS] and headers[12] == "Average", headers
    assert not any("frames" in h or "refusal" in h.lower() for h in headers), headers
    assert seen["page_scroll"] <= seen["page_client"] and seen["beyond"] == [] and seen["scrollers"] == [], seen
    index = (out / "index.html").read_text()
    assert "0 frames" not in index and " frames</th>" not in index
    for row in model_rows(dimension_scores(judgments)):
        members = [j for j in judgments if (j.model, j.judge) == (row.model, row.judge)]
        pooled = 100 * sum(j.judgement for j in members) / len(members)
        assert f"{row.average:.2f}" in seen["text"] and f"<b>{row.average:.2f}</b>" in index
        if row.model != "refuse":  # (refuse: 0 either way)
            assert round(row.average, 2) != round(pooled, 2) and f"<b>{pooled:.2f}</b>" not in index
    if any(j.model == "TimeChat" for j in judgments):
        timechat = next(row for row in index.split("<tr>") if row.startswith('<th class="arm">TimeChat '))
        assert "<b>32.89</b>" in timechat and "33.83" not in timechat  # CVRR-ES's Table 2, and not its items pooled
    assert "refused an answerable item" in seen["text"] and "over_refusal" not in seen["text"]
    listing = (out / "lists" / "rules" / "refuse" / "standard" / "8.html").read_text()
    assert "<title>refuse, prompt standard, 8 frames (judge rules)</title>" in listing
    published = next(out.glob(f"lists/{safe_name(PUBLISHED_JUDGE)}/*/standard/0.html")).read_text()
    assert "0 frames" not in published and "published run" in published


def test_a_judge_not_in_scores_csv_is_scored_and_listed_under_the_runs_scoring_options(site, tmp_path):
    """report.invalid and report.categories reach the browser: a judge it scores itself (none is in scores.csv here)
    is scored as compute_scores scores it under them, and the item lists tag each item with its mapped category."""
    from virtuebench.metrics import DEFAULT_TRUST, Scoring

    bench = site[0].parent
    instances = read_instances(bench / "instances.parquet")
    judgments = [Judgment(**record) for record in json.loads((site[0] / "judgments.json").read_text())]
    judgments[0] = dataclasses.replace(judgments[0], valid=False, response=None, error="failed")  # dropped under drop
    scoring = Scoring.of("drop", dict.fromkeys({j.task_type for j in judgments}, "reasoning"))
    built = Site(instances, judgments, bench / "frames", tmp_path / "site", options=Options(scoring=scoring))
    expected = {(s.judge, s.model, s.prompt, s.level, s.subset): s for s in compute_scores(judgments, Bootstrap(), DEFAULT_TRUST, scoring)}
    assert built.scores() == expected and any(s.n_dropped for s in expected.values())
    assert not any(key[-1] == "perception" for key in expected)
    built.build()
    lists = [path.read_text() for path in (tmp_path / "site" / "lists").rglob("*.html")]
    assert lists and all(" perception" not in page.split("data-flags=", 1)[-1] for page in lists)
    assert any("reasoning" in page for page in lists)
